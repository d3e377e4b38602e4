/* cli.h — the commands of the `caml` tool. Each returns an exit status. */
#pragma once

int caml_cli_train (int argc, char **argv);
int caml_cli_eval (int argc, char **argv);
int caml_cli_sweep (int argc, char **argv);
int caml_cli_bench (int argc, char **argv);
int caml_cli_layers (int argc, char **argv);
int caml_cli_rnn_sanity (int argc, char **argv);
int caml_cli_sem (int argc, char **argv);
/* docs/layers.md as generated from the registry; free with g_free. */
char *caml_layers_markdown (void);
