/* placeholder main until the CLI lands */
#include "thpsim.h"
int main(void) { return 0; }
