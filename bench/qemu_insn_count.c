/* A qemu-user plugin counting the guest instructions a program executes, printed to stderr
 * at exit as "qemu_insn_count: N". For comparing kernels under qemu, whose wall time says
 * little about a real CPU (bench/aarch64_kernels.sh). Counts are exact for one guest thread:
 * the inline adds are not atomic, so run the program with --threads 1.
 *
 *   gcc -O2 -shared -fPIC -o libinsn_count.so bench/qemu_insn_count.c
 *   qemu-aarch64 -plugin ./libinsn_count.so -L /usr/aarch64-linux-gnu PROGRAM ...
 *
 * Debian ships qemu-user with plugin support but neither its plugins nor qemu-plugin.h, so the
 * few entry points used are declared here as QEMU's plugin API (version 1, QEMU 4.2 to 8.x)
 * defines them; qemu resolves them when it loads the plugin. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t; /* not read */
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb, enum qemu_plugin_op op, void* ptr,
                                              uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t id, void* userdata),
                                    void* userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t executed;

/* Each translated block adds its instruction count to `executed` whenever it runs. */
static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed, qemu_plugin_tb_n_insns(tb));
}

static void report(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  fprintf(stderr, "qemu_insn_count: %" PRIu64 "\n", executed);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info, int argc,
                                                               char** argv) {
  (void)info;
  (void)argc;
  (void)argv;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, report, NULL);
  return 0;
}
