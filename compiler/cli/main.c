/* main.c — texc's entry point; everything else is in the compiler library (driver.c). */
#include "driver.h"

int main(int argc, char **argv) { return drv_main(argc, argv); }
