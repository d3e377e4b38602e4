/* cli-mpi.h — `caml` on several ranks (mpirun, srun): Open MPI or any MPI,
 * when the build has one. Without it, or when the process was not started
 * by an MPI launcher, there is one rank and every call is trivial. */
#pragma once

#include "caml.h"

/* Starts MPI when an MPI launcher started this process (its environment
 * says so), at the top of main, before any thread. Returns FALSE with an
 * error when MPI would not start. */
gboolean caml_cli_mpi_init (int *argc, char ***argv, GError **error);
/* At the end, with the command's exit status: a rank that failed before
 * the ranks agreed to start (caml_cli_mpi_ready) ends the job
 * (caml_cli_mpi_abort), as the others may be waiting for it. */
void     caml_cli_mpi_finalize (int status);
/* Ends every rank of the job now, with status; a silent rank first says
 * the last thing it kept quiet. */
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
/* The replicas' sums (CamlReplicaReduce) over every rank. */
gboolean caml_cli_mpi_reduce (CamlReplicaSums *sums, gpointer user_data, GError **error);
/* Sums values over every rank, in place (CamlSumFunc: caml sem's shards). */
gboolean caml_cli_mpi_sum (double *values, gsize n, gpointer user_data, GError **error);
/* The sums so far (caml_cli_mpi_reduce, caml_cli_mpi_sum): MPI_Allreduce
 * calls, the bytes this rank gave them, and the seconds they took (waiting
 * for the slowest rank included). */
void     caml_cli_mpi_reduced (long *calls, double *bytes, double *seconds);
/* Every rank's bytes, in rank order, on every rank (a collective): an
 * array of caml_cli_mpi_size () GBytes, mine among them; NULL with an error
 * when MPI fails. */
GPtrArray *caml_cli_mpi_gather (GBytes *mine, GError **error);

/* Whether every rank is ready to start (a collective: every rank calls it
 * once, at the same point): problem is why this rank is not, or NULL. The
 * caller has said its problem; on one rank that is all. On several, only
 * the first rank speaks — it said its own — so a rank that is not ready
 * while the first is says why here. */
gboolean caml_cli_mpi_ready (const char *problem);

/* A work queue over the ranks (caml sweep): the items 0…n_items-1 go, one
 * at a time, to whichever rank is free — the first rank works its share
 * too — and each is worked once: work (item) on its rank returns the
 * result's bytes. On the first rank, begin (item, rank) is told as an item
 * is handed out and done (item, rank, result) as its result comes in, both
 * on one thread, never while this rank's work runs on the caller's (they
 * may share state with each other, not with work); done returns FALSE to
 * hand out no more (what is handed out still finishes). Nothing is handed
 * out once a signal is heard (caml_cli_signal_heard). One rank: begin, work
 * and done in turn for each item. Every rank calls it; a failed MPI call
 * ends the job. */
typedef void     (*CamlCliMpiBegin) (int item, int rank, gpointer data);
typedef GBytes  *(*CamlCliMpiWork)  (int item, gpointer data);
typedef gboolean (*CamlCliMpiDone)  (int item, int rank, GBytes *result, gpointer data);
void     caml_cli_mpi_share (int n_items, CamlCliMpiBegin begin, CamlCliMpiWork work,
                             CamlCliMpiDone done, gpointer data);
