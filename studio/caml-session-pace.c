/* caml-session-pace.c — how fast the session's run trains: the speed
 * ("speed": steps a tick, 0 for full speed) and training until stopped
 * ("continuous").
 *
 * Slow speeds never block anything: the run's trainer (and its baseline's)
 * stays paused on its own thread, and a main-loop timeout — the session's
 * tick, PACE_TICK_MS — first copies what the trainer did since the last
 * tick (so every plot shows every grant), then grants the next `speed`
 * steps (caml_trainer_step adds to the trainer's budget) once the last
 * grant is used up. While it plays the session shows the run as RUNNING.
 * A paused trainer samples the surface, χ, σ-maps and words after every
 * step, so at these speeds every plot moves with every step.
 *
 * Until stopped: the run's steps are raised ahead of it (doubled whenever
 * it is half-way there, caml_run_extend, which goes on exactly), and a run
 * that reached its end anyway goes on; Stop ends it, keeping its weights. */
#include "caml-session-private.h"


static gboolean
pace_tick (gpointer data)
{
  CamlSession *self = data;
  CamlProgress p;

  if (self->run == NULL || !self->playing || self->cancellable == NULL)
    {
      self->pace_source = 0;
      return G_SOURCE_REMOVE;
    }
  update_from_run (self);   /* what the last grant did, shown before the next */
  caml_run_get_progress (self->run, &p);
  if (p.state != CAML_TRAINER_PAUSED)
    {
      if (p.state == CAML_TRAINER_RUNNING)
        return G_SOURCE_CONTINUE;   /* a step still under way */
      /* It ended (finished, stopped, failed): nothing more to grant. */
      self->playing = FALSE;
      self->pace_source = 0;
      update_from_run (self);
      return G_SOURCE_REMOVE;
    }
  if (p.step >= self->pace_granted)
    {
      for (int i = 0; i < self->speed; i++)
        caml_trainer_step (caml_run_get_trainer (self->run));
      self->pace_granted = p.step + self->speed;
      self->pace_ticks++;
    }
  if (self->baseline != NULL)
    {
      CamlProgress bp;
      caml_run_get_progress (self->baseline, &bp);
      if (bp.state == CAML_TRAINER_PAUSED && bp.step >= self->base_granted)
        {
          for (int i = 0; i < self->speed; i++)
            caml_trainer_step (caml_run_get_trainer (self->baseline));
          self->base_granted = bp.step + self->speed;
        }
    }
  return G_SOURCE_CONTINUE;
}

/* The run's trainer (and its baseline's), paused, is stepped by the tick. */
static void
start_playing (CamlSession *self)
{
  CamlProgress p;

  caml_run_get_progress (self->run, &p);
  self->playing = TRUE;
  self->pace_granted = p.step;
  self->base_granted = 0;
  if (self->baseline != NULL)
    {
      CamlProgress bp;
      caml_run_get_progress (self->baseline, &bp);
      self->base_granted = bp.step;
    }
  if (self->pace_source == 0)
    self->pace_source = g_timeout_add_full (G_PRIORITY_DEFAULT, PACE_TICK_MS, pace_tick,
                                            g_object_ref (self), g_object_unref);
}

void
pace_stop (CamlSession *self)
{
  self->playing = FALSE;
  g_clear_handle_id (&self->pace_source, g_source_remove);
}

/* The run was just started, resumed or continued running: at a slow speed
 * it is paused again and played by the tick. */
void
pace_run_started (CamlSession *self)
{
  if (self->run == NULL || !self->run_started)
    return;
  pace_keep_ahead (self);
  if (self->speed <= 0)
    return;
  caml_trainer_pause (caml_run_get_trainer (self->run));
  if (self->baseline != NULL)
    caml_trainer_pause (caml_run_get_trainer (self->baseline));
  start_playing (self);
}

/* Resume (Train on a paused run): played at a slow speed, else resumed. */
void
pace_resume (CamlSession *self)
{
  if (self->speed > 0)
    start_playing (self);
  else
    {
      caml_trainer_resume (caml_run_get_trainer (self->run));
      if (self->baseline != NULL)
        caml_trainer_resume (caml_run_get_trainer (self->baseline));
    }
  pace_keep_ahead (self);
}

/* Until stopped: the run's end stays ahead of it. A run that reached it
 * anyway (a fast model between two updates) goes on from there. */
void
pace_keep_ahead (CamlSession *self)
{
  CamlProgress p;

  if (!self->continuous || self->run == NULL || !self->run_started)
    return;
  caml_run_get_progress (self->run, &p);
  gboolean ended = p.state == CAML_TRAINER_FINISHED;
  if (p.state != CAML_TRAINER_RUNNING && p.state != CAML_TRAINER_PAUSED && !ended)
    return;
  if (!ended && p.step * 2 < p.total_steps)
    return;
  long total = MAX (p.total_steps * 2, p.step + 1000);
  if (total > G_MAXINT)
    return;
  if (!caml_run_extend (self->run, (int) total, NULL))
    return;
  if (self->baseline != NULL)
    caml_run_extend (self->baseline, (int) total, NULL);
  if (ended)
    {
      /* caml_run_extend leaves a run that had ended paused: on it goes. */
      if (self->speed > 0)
        start_playing (self);
      else
        {
          caml_trainer_resume (caml_run_get_trainer (self->run));
          if (self->baseline != NULL)
            caml_trainer_resume (caml_run_get_trainer (self->baseline));
        }
    }
}

/* The state shown: a run played by the tick trains, though its trainer
 * waits between grants. */
CamlTrainerState
pace_shown_state (CamlSession *self, CamlTrainerState state)
{
  return self->playing && state == CAML_TRAINER_PAUSED ? CAML_TRAINER_RUNNING : state;
}

void
caml_session_set_speed (CamlSession *self, int steps_per_tick)
{
  steps_per_tick = CLAMP (steps_per_tick, 0, CAML_SESSION_MAX_SPEED);
  if (steps_per_tick == self->speed)
    return;
  self->speed = steps_per_tick;
  session_notify_pace (self, FALSE);
  if (self->run == NULL || !self->run_started)
    return;
  if (self->speed > 0 && self->progress.state == CAML_TRAINER_RUNNING && !self->playing)
    {
      /* Full speed to slow: the trainer pauses and the tick plays it. */
      caml_trainer_pause (caml_run_get_trainer (self->run));
      if (self->baseline != NULL)
        caml_trainer_pause (caml_run_get_trainer (self->baseline));
      start_playing (self);
    }
  else if (self->speed == 0 && self->playing)
    {
      pace_stop (self);
      caml_trainer_resume (caml_run_get_trainer (self->run));
      if (self->baseline != NULL)
        caml_trainer_resume (caml_run_get_trainer (self->baseline));
    }
  update_from_run (self);
}

int
caml_session_get_speed (CamlSession *self)
{
  return self->speed;
}

void
caml_session_set_continuous (CamlSession *self, gboolean continuous)
{
  if (continuous == self->continuous)
    return;
  self->continuous = continuous;
  session_notify_pace (self, TRUE);
  pace_keep_ahead (self);
  session_changed (self);   /* the progress line says "until stopped" */
}

gboolean
caml_session_get_continuous (CamlSession *self)
{
  return self->continuous;
}

guint
caml_session_get_pace_ticks (CamlSession *self)
{
  return self->pace_ticks;
}
