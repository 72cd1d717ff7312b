#include "test_util.h"
int main(void) { TEST_MAIN_END(); }
