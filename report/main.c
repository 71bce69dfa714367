// placeholder until report/ lands
#include "common/log.h"
int main(int argc, char **argv) { xpu_log_init(argv[0]); die(XPU_EXIT_FAILURE, "not built yet"); }
