/* SPDX-License-Identifier: MIT */
/* --activate: start recording at a wall-clock instant (activate.c). */
#ifndef XPU_RECORD_CAPTURE_ACTIVATE_H
#define XPU_RECORD_CAPTURE_ACTIVATE_H

#include <stdbool.h>

struct rotate_opts;

/* --activate WHEN: @YYYY-MM-DDTHH:MM:SS[Z], @UNIX_SECONDS or /PERIOD; a
 * one-line usage error on a bad value. */
void rotate_opts__activate(struct rotate_opts *ro, const char *arg);
/* The seconds until the instant (0: none, or passed). */
double activate__delay(const struct rotate_opts *ro);
/* Sleeps until the instant (SIGINT/SIGTERM end the wait: false). */
bool activate__wait(const struct rotate_opts *ro, volatile int *stop);

#endif
