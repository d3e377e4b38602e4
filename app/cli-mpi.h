/* cli-mpi.h — `caml` on several ranks (mpirun, srun): Open MPI or any MPI,
 * when the build has one. Without it, or when the process was not started
 * by an MPI launcher, there is one rank and every call is trivial. */
#pragma once

#include "caml.h"

/* Starts MPI when an MPI launcher started this process (its environment
 * says so), at the top of main, before any thread. Returns FALSE with an
 * error when MPI would not start. */
gboolean caml_cli_mpi_init (int *argc, char ***argv, GError **error);
void     caml_cli_mpi_finalize (void);
/* Ends every rank of the job now, with status. */
G_NORETURN void caml_cli_mpi_abort (int status);
/* "Open MPI v4.1.4", or NULL for a build without MPI; free with g_free. */
char    *caml_cli_mpi_library (void);
int      caml_cli_mpi_rank (void);
int      caml_cli_mpi_size (void);
/* Ranks on this machine (sharing its cores). */
int      caml_cli_mpi_local_size (void);
/* Past the first rank, standard error says nothing (every rank parses the
 * same options and would say the same) unless a rank has something of its
 * own to say: its own failure (a file only it cannot read). */
void     caml_cli_mpi_speak (gboolean speak);
/* Whether ok holds on every rank (a collective: every rank must call it). */
gboolean caml_cli_mpi_all (gboolean ok);
/* The replicas' sums (CamlReplicaReduce) over every rank. */
gboolean caml_cli_mpi_reduce (CamlReplicaSums *sums, gpointer user_data, GError **error);
