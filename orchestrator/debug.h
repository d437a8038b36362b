/*
 * debug.h: the orchestrator's debugging features (docs/debugging.md):
 * capturing a hang (stacks, dump, trace tail of every peer into hang/)
 * and stopping a fleet left up by --keep.
 */
#ifndef DEBUG_H
#define DEBUG_H

struct run;

/* Write RUN/hang/: per peer its stacks, dump and trace tail, and a summary. */
void	debug_capture_hang(struct run *r, const char *why);
/* Print the kept fleet's table (peer, pid, listen, socket, peerctl line). */
void	debug_print_kept(const struct run *r);
/* Stop the peers a kept run left (orchestrate down RUN_DIR); exit status. */
int	debug_down(const char *run_dir);

#endif
