/* cli-mpi.c — `caml` on several ranks: MPI started only when an MPI
 * launcher started the process, the ranks, and the sums that data-parallel
 * training (caml_trainer_set_replica) needs. The engine knows nothing of
 * MPI: the trainer calls caml_cli_mpi_reduce from its thread, the only MPI
 * calls while it runs (MPI_THREAD_SERIALIZED). */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "cli-mpi.h"

static gboolean speaking = TRUE;

static void
print_if_speaking (const char *string)
{
  if (speaking)
    fputs (string, stderr);
}

void
caml_cli_mpi_speak (gboolean speak)
{
  speaking = speak;
}

#ifdef CAML_HAVE_MPI
#include <mpi.h>

static gboolean started;
static int rank, size = 1, local_size = 1;

/* Open MPI's mpirun, Hydra (MPICH) and Slurm's PMI/PMIx set these. */
static gboolean
launched_by_mpi (void)
{
  return g_getenv ("OMPI_COMM_WORLD_SIZE") != NULL || g_getenv ("PMI_SIZE") != NULL
         || g_getenv ("PMIX_RANK") != NULL;
}

static void
set_mpi_error (GError **error, const char *what, int code)
{
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string (code, text, &len) != MPI_SUCCESS)
    g_snprintf (text, sizeof text, "error %d", code);
  g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: %s", what, text);
}

gboolean
caml_cli_mpi_init (int *argc, char ***argv, GError **error)
{
  if (!launched_by_mpi ())
    return TRUE;
  int provided = 0;
  int code = MPI_Init_thread (argc, argv, MPI_THREAD_SERIALIZED, &provided);
  if (code != MPI_SUCCESS)
    {
      set_mpi_error (error, "MPI_Init_thread", code);
      return FALSE;
    }
  started = TRUE;
  if (provided < MPI_THREAD_SERIALIZED)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "this MPI library cannot be called from the training thread "
                   "(it provides thread level %d, caml needs MPI_THREAD_SERIALIZED)", provided);
      return FALSE;
    }
  /* a failed call returns to us, which then ends the job with a message */
  MPI_Comm_set_errhandler (MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank (MPI_COMM_WORLD, &rank);
  MPI_Comm_size (MPI_COMM_WORLD, &size);
  if (rank > 0)
    {
      speaking = FALSE;
      g_set_printerr_handler (print_if_speaking);
    }
  MPI_Comm local;
  if (MPI_Comm_split_type (MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                           &local) == MPI_SUCCESS)
    {
      MPI_Comm_size (local, &local_size);
      MPI_Comm_free (&local);
    }
  return TRUE;
}

void
caml_cli_mpi_finalize (void)
{
  if (started)
    MPI_Finalize ();
  started = FALSE;
}

void
caml_cli_mpi_abort (int status)
{
  if (started)
    MPI_Abort (MPI_COMM_WORLD, status);
  exit (status);
}

char *
caml_cli_mpi_library (void)
{
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  if (MPI_Get_library_version (text, &len) != MPI_SUCCESS)
    return g_strdup ("MPI");
  /* "Open MPI v4.1.4, package: …": the name and version */
  char *comma = strchr (text, ',');
  if (comma != NULL)
    *comma = '\0';
  return g_strdup (g_strstrip (text));
}

int
caml_cli_mpi_rank (void)
{
  return rank;
}

int
caml_cli_mpi_size (void)
{
  return size;
}

int
caml_cli_mpi_local_size (void)
{
  return local_size;
}

gboolean
caml_cli_mpi_all (gboolean ok)
{
  if (size <= 1)
    return ok;
  int mine = ok ? 1 : 0, all = 0;
  if (MPI_Allreduce (&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
    return FALSE;
  return all == 1;
}

/* In place, in pieces an int can count. */
static int
allreduce (void *buf, size_t count, MPI_Datatype type, size_t item, MPI_Op op)
{
  char *at = buf;
  while (count > 0)
    {
      int n = (int) MIN (count, (size_t) INT_MAX / 4);
      int code = MPI_Allreduce (MPI_IN_PLACE, at, n, type, op, MPI_COMM_WORLD);
      if (code != MPI_SUCCESS)
        return code;
      at += (size_t) n * item;
      count -= (size_t) n;
    }
  return MPI_SUCCESS;
}

gboolean
caml_cli_mpi_reduce (CamlReplicaSums *s, gpointer user_data, GError **error)
{
  int code = allreduce (s->grad, s->n_grad, MPI_FLOAT, sizeof (float), MPI_SUM);
  if (code == MPI_SUCCESS)
    code = allreduce (s->sums, (size_t) s->n_sums, MPI_DOUBLE, sizeof (double), MPI_SUM);
  if (code == MPI_SUCCESS && s->marks != NULL)
    code = allreduce (s->marks, s->n_marks, MPI_UNSIGNED_CHAR, 1, MPI_BOR);
  if (code != MPI_SUCCESS)
    {
      set_mpi_error (error, "MPI_Allreduce", code);
      return FALSE;
    }
  return TRUE;
}

#else   /* no MPI in this build: one rank */

gboolean
caml_cli_mpi_init (int *argc, char ***argv, GError **error)
{
  if (g_getenv ("OMPI_COMM_WORLD_SIZE") != NULL || g_getenv ("PMI_SIZE") != NULL)
    {
      const char *n = g_getenv ("OMPI_COMM_WORLD_SIZE");
      if (n == NULL)
        n = g_getenv ("PMI_SIZE");
      if (g_strcmp0 (n, "1") != 0)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "started on %s ranks by an MPI launcher, but this caml was built "
                       "without MPI (meson -Dmpi=enabled, with libopenmpi-dev)", n);
          return FALSE;
        }
    }
  return TRUE;
}

void
caml_cli_mpi_finalize (void)
{
}

void
caml_cli_mpi_abort (int status)
{
  exit (status);
}

char *
caml_cli_mpi_library (void)
{
  return NULL;
}

int
caml_cli_mpi_rank (void)
{
  return 0;
}

int
caml_cli_mpi_size (void)
{
  return 1;
}

int
caml_cli_mpi_local_size (void)
{
  return 1;
}

gboolean
caml_cli_mpi_all (gboolean ok)
{
  return ok;
}

gboolean
caml_cli_mpi_reduce (CamlReplicaSums *s, gpointer user_data, GError **error)
{
  return TRUE;
}

#endif
