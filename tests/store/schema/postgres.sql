-- constraint warden.api_tokens api_tokens_pkey
ALTER TABLE warden.api_tokens ADD CONSTRAINT api_tokens_pkey PRIMARY KEY (id);

-- constraint warden.attempts attempts_pkey
ALTER TABLE warden.attempts ADD CONSTRAINT attempts_pkey PRIMARY KEY (job_id, attempt);

-- constraint warden.audit_log audit_log_pkey
ALTER TABLE warden.audit_log ADD CONSTRAINT audit_log_pkey PRIMARY KEY (id);

-- constraint warden.bulk_ops bulk_ops_pkey
ALTER TABLE warden.bulk_ops ADD CONSTRAINT bulk_ops_pkey PRIMARY KEY (id);

-- constraint warden.fenced_writes fenced_writes_pkey
ALTER TABLE warden.fenced_writes ADD CONSTRAINT fenced_writes_pkey PRIMARY KEY (id);

-- constraint warden.job_actions job_actions_pkey
ALTER TABLE warden.job_actions ADD CONSTRAINT job_actions_pkey PRIMARY KEY (id);

-- constraint warden.job_counts job_counts_pkey
ALTER TABLE warden.job_counts ADD CONSTRAINT job_counts_pkey PRIMARY KEY (queue, state, task, command);

-- constraint warden.jobs jobs_delivery_check
ALTER TABLE warden.jobs ADD CONSTRAINT jobs_delivery_check CHECK ((delivery = ANY (ARRAY['at_least_once'::text, 'at_most_once'::text])));

-- constraint warden.jobs jobs_lease_ms_check
ALTER TABLE warden.jobs ADD CONSTRAINT jobs_lease_ms_check CHECK ((lease_ms >= 1000));

-- constraint warden.jobs jobs_max_attempts_check
ALTER TABLE warden.jobs ADD CONSTRAINT jobs_max_attempts_check CHECK ((max_attempts >= 1));

-- constraint warden.jobs jobs_max_crashes_check
ALTER TABLE warden.jobs ADD CONSTRAINT jobs_max_crashes_check CHECK ((max_crashes >= 1));

-- constraint warden.jobs jobs_pkey
ALTER TABLE warden.jobs ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);

-- constraint warden.jobs jobs_retry_check
ALTER TABLE warden.jobs ADD CONSTRAINT jobs_retry_check CHECK ((retry = ANY (ARRAY['none'::text, 'default'::text, 'forever'::text])));

-- constraint warden.jobs jobs_state_check
ALTER TABLE warden.jobs ADD CONSTRAINT jobs_state_check CHECK ((state = ANY (ARRAY['scheduled'::text, 'available'::text, 'running'::text, 'succeeded'::text, 'retryable'::text, 'dead'::text, 'cancelled'::text, 'expired'::text])));

-- constraint warden.jobs jobs_timeout_ms_check
ALTER TABLE warden.jobs ADD CONSTRAINT jobs_timeout_ms_check CHECK ((timeout_ms > 0));

-- constraint warden.leaders leaders_pkey
ALTER TABLE warden.leaders ADD CONSTRAINT leaders_pkey PRIMARY KEY (name);

-- constraint warden.metrics_retired metrics_retired_pkey
ALTER TABLE warden.metrics_retired ADD CONSTRAINT metrics_retired_pkey PRIMARY KEY (series);

-- constraint warden.nodes nodes_pkey
ALTER TABLE warden.nodes ADD CONSTRAINT nodes_pkey PRIMARY KEY (name);

-- constraint warden.queue_limits queue_limits_pkey
ALTER TABLE warden.queue_limits ADD CONSTRAINT queue_limits_pkey PRIMARY KEY (queue);

-- constraint warden.queue_pauses queue_pauses_pkey
ALTER TABLE warden.queue_pauses ADD CONSTRAINT queue_pauses_pkey PRIMARY KEY (queue);

-- constraint warden.queue_starts queue_starts_pkey
ALTER TABLE warden.queue_starts ADD CONSTRAINT queue_starts_pkey PRIMARY KEY (queue, at);

-- constraint warden.schema_version schema_version_pkey
ALTER TABLE warden.schema_version ADD CONSTRAINT schema_version_pkey PRIMARY KEY (version);

-- constraint warden.workers workers_pkey
ALTER TABLE warden.workers ADD CONSTRAINT workers_pkey PRIMARY KEY (id);

-- function warden.add_job(text,json,text,integer,timestamp with time zone,
CREATE OR REPLACE FUNCTION warden.add_job(task text, payload json DEFAULT '{}'::json, queue text DEFAULT 'default'::text, priority integer DEFAULT 0, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, max_attempts integer DEFAULT 5, unique_key text DEFAULT NULL::text, concurrency_key text DEFAULT NULL::text, timeout interval DEFAULT '00:30:00'::interval, delivery text DEFAULT 'at_least_once'::text, retry text DEFAULT 'default'::text, lease interval DEFAULT NULL::interval, start_deadline interval DEFAULT NULL::interval, max_crashes integer DEFAULT 3)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
DECLARE
  now_ms bigint := warden.now_ms();
  at_ms  bigint := coalesce((extract(epoch FROM run_at) * 1000)::bigint, now_ms);
  new_id bigint;
BEGIN
  -- An empty key is no key, as for warden's clients: one '' unique key
  -- would make every job given it a duplicate of the first, and one ''
  -- concurrency key would let only one of them run at a time.
  unique_key := nullif(unique_key, '');
  concurrency_key := nullif(concurrency_key, '');
  IF task IS NULL OR task = '' THEN
    RAISE EXCEPTION 'warden.add_job: task must not be empty' USING ERRCODE = '22023';
  END IF;
  -- The name rules of ValidateSpec (src/client/client.cc): a job no
  -- `warden worker` can name would wait for ever.
  IF queue = '' THEN
    RAISE EXCEPTION 'warden.add_job: queue must not be empty' USING ERRCODE = '22023';
  END IF;
  IF octet_length(task) > 200 OR octet_length(queue) > 200 OR octet_length(unique_key) > 200
      OR octet_length(concurrency_key) > 200 THEN
    RAISE EXCEPTION 'warden.add_job: task, queue and keys are at most 200 bytes'
      USING ERRCODE = '22023';
  END IF;
  IF concat(task, queue, unique_key, concurrency_key) ~ '[\x01-\x1f\x7f]' THEN
    RAISE EXCEPTION 'warden.add_job: task, queue and keys must not contain control characters'
      USING ERRCODE = '22023';
  END IF;
  IF position(',' IN queue) > 0 THEN
    RAISE EXCEPTION 'warden.add_job: queue must not contain '','' (warden worker --queues '
      'splits at commas): %', queue USING ERRCODE = '22023';
  END IF;
  IF position('=' IN task) > 0 THEN
    RAISE EXCEPTION 'warden.add_job: task must not contain ''='' (warden worker --task '
      'NAME=COMMAND splits at the first ''=''): %', task USING ERRCODE = '22023';
  END IF;
  IF delivery IS NULL OR delivery NOT IN ('at_least_once', 'at_most_once') THEN
    RAISE EXCEPTION 'warden.add_job: delivery must be at_least_once or at_most_once, not %',
      delivery USING ERRCODE = '22023';
  END IF;
  IF retry IS NULL OR retry NOT IN ('none', 'default', 'forever') THEN
    RAISE EXCEPTION 'warden.add_job: retry must be none, default or forever, not %', retry
      USING ERRCODE = '22023';
  END IF;
  IF max_attempts IS NULL OR max_attempts < 1 OR max_crashes IS NULL OR max_crashes < 1 THEN
    RAISE EXCEPTION 'warden.add_job: max_attempts and max_crashes must be at least 1'
      USING ERRCODE = '22023';
  END IF;
  IF lease IS NOT NULL AND lease < interval '1 second' THEN
    RAISE EXCEPTION 'warden.add_job: lease must be at least 1 second' USING ERRCODE = '22023';
  END IF;
  IF timeout IS NULL OR timeout <= interval '0' THEN
    RAISE EXCEPTION 'warden.add_job: timeout must be positive' USING ERRCODE = '22023';
  END IF;
  IF octet_length(payload::text) > 1048576 THEN
    RAISE EXCEPTION 'warden.add_job: payload is larger than 1 MiB' USING ERRCODE = '22023';
  END IF;
  IF unique_key IS NOT NULL THEN
    SELECT j.id INTO new_id FROM warden.jobs j WHERE j.unique_key = add_job.unique_key
      AND j.state IN ('scheduled', 'available', 'running', 'retryable');
    IF FOUND THEN RETURN new_id; END IF;
  END IF;
  INSERT INTO warden.jobs AS j (queue, task, payload, priority, state, run_at, max_attempts,
      max_crashes, retry, delivery, timeout_ms, lease_ms, start_deadline_at, unique_key,
      concurrency_key, created_at)
    VALUES (coalesce(add_job.queue, 'default'), add_job.task, coalesce(add_job.payload, '{}'),
      coalesce(add_job.priority, 0), CASE WHEN at_ms > now_ms THEN 'scheduled' ELSE 'available' END,
      at_ms, add_job.max_attempts, add_job.max_crashes, add_job.retry, add_job.delivery,
      (extract(epoch FROM add_job.timeout) * 1000)::bigint,
      (extract(epoch FROM add_job.lease) * 1000)::bigint,
      at_ms + (extract(epoch FROM add_job.start_deadline) * 1000)::bigint,
      add_job.unique_key, add_job.concurrency_key, now_ms)
    ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL
      AND state IN ('scheduled', 'available', 'running', 'retryable') DO NOTHING
    RETURNING j.id INTO new_id;
  IF new_id IS NULL THEN  -- a concurrent transaction added the same unique_key
    SELECT j.id INTO new_id FROM warden.jobs j WHERE j.unique_key = add_job.unique_key
      AND j.state IN ('scheduled', 'available', 'running', 'retryable');
  END IF;
  RETURN new_id;
END $function$;

-- function warden.job_counts_deleted()
CREATE OR REPLACE FUNCTION warden.job_counts_deleted()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO warden.job_count_deltas (queue, state, task, command, n)
    SELECT queue, state, task, command <> '', -count(*) FROM old_jobs GROUP BY 1, 2, 3, 4;
  RETURN NULL;
END $function$;

-- function warden.job_counts_inserted()
CREATE OR REPLACE FUNCTION warden.job_counts_inserted()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO warden.job_count_deltas (queue, state, task, command, n)
    SELECT queue, state, task, command <> '', count(*) FROM new_jobs GROUP BY 1, 2, 3, 4;
  RETURN NULL;
END $function$;

-- function warden.job_counts_truncated()
CREATE OR REPLACE FUNCTION warden.job_counts_truncated()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  DELETE FROM warden.job_count_deltas;
  DELETE FROM warden.job_counts;
  RETURN NULL;
END $function$;

-- function warden.job_counts_updated()
CREATE OR REPLACE FUNCTION warden.job_counts_updated()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO warden.job_count_deltas (queue, state, task, command, n)
    SELECT queue, state, task, command, sum(d) FROM (
      SELECT queue, state, task, command <> '' AS command, 1 AS d FROM new_jobs
      UNION ALL SELECT queue, state, task, command <> '', -1 FROM old_jobs) c
    GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0;
  RETURN NULL;
END $function$;

-- function warden.notify_jobs()
CREATE OR REPLACE FUNCTION warden.notify_jobs()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_notify('warden_jobs', '');
  RETURN NULL;
END $function$;

-- function warden.now_ms()
CREATE OR REPLACE FUNCTION warden.now_ms()
 RETURNS bigint
 LANGUAGE sql
 STABLE
AS $function$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint $function$;

-- index api_tokens_live_name
CREATE UNIQUE INDEX api_tokens_live_name ON warden.api_tokens USING btree (name) WHERE (revoked_at IS NULL);

-- index api_tokens_pkey
CREATE UNIQUE INDEX api_tokens_pkey ON warden.api_tokens USING btree (id);

-- index attempts_outcome
CREATE INDEX attempts_outcome ON warden.attempts USING btree (outcome) WHERE (outcome <> 'succeeded'::text);

-- index attempts_pkey
CREATE UNIQUE INDEX attempts_pkey ON warden.attempts USING btree (job_id, attempt);

-- index audit_log_pkey
CREATE UNIQUE INDEX audit_log_pkey ON warden.audit_log USING btree (id);

-- index bulk_ops_pkey
CREATE UNIQUE INDEX bulk_ops_pkey ON warden.bulk_ops USING btree (id);

-- index bulk_ops_running
CREATE INDEX bulk_ops_running ON warden.bulk_ops USING btree (id) WHERE (state = 'running'::text);

-- index fenced_writes_at
CREATE INDEX fenced_writes_at ON warden.fenced_writes USING btree (at);

-- index fenced_writes_job
CREATE INDEX fenced_writes_job ON warden.fenced_writes USING btree (job_id);

-- index fenced_writes_pkey
CREATE UNIQUE INDEX fenced_writes_pkey ON warden.fenced_writes USING btree (id);

-- index job_actions_job
CREATE INDEX job_actions_job ON warden.job_actions USING btree (job_id);

-- index job_actions_pkey
CREATE UNIQUE INDEX job_actions_pkey ON warden.job_actions USING btree (id);

-- index job_counts_pkey
CREATE UNIQUE INDEX job_counts_pkey ON warden.job_counts USING btree (queue, state, task, command);

-- index jobs_claim
CREATE INDEX jobs_claim ON warden.jobs USING btree (queue, priority DESC, run_at, id) WHERE (state = 'available'::text);

-- index jobs_crash_loop
CREATE INDEX jobs_crash_loop ON warden.jobs USING btree (id) WHERE (last_error = 'crash_loop'::text);

-- index jobs_deadline
CREATE INDEX jobs_deadline ON warden.jobs USING btree (start_deadline_at) WHERE ((start_deadline_at IS NOT NULL) AND (state = ANY (ARRAY['scheduled'::text, 'available'::text, 'retryable'::text])));

-- index jobs_due
CREATE INDEX jobs_due ON warden.jobs USING btree (run_at) WHERE (state = ANY (ARRAY['scheduled'::text, 'retryable'::text]));

-- index jobs_due_group
CREATE INDEX jobs_due_group ON warden.jobs USING btree (queue, task, ((command <> ''::text)), state, run_at) WHERE (state = ANY (ARRAY['scheduled'::text, 'retryable'::text]));

-- index jobs_finished
CREATE INDEX jobs_finished ON warden.jobs USING btree (finished_at) WHERE (finished_at IS NOT NULL);

-- index jobs_live_unique
CREATE UNIQUE INDEX jobs_live_unique ON warden.jobs USING btree (unique_key) WHERE ((unique_key IS NOT NULL) AND (state = ANY (ARRAY['scheduled'::text, 'available'::text, 'running'::text, 'retryable'::text])));

-- index jobs_pkey
CREATE UNIQUE INDEX jobs_pkey ON warden.jobs USING btree (id);

-- index jobs_running_ckey
CREATE UNIQUE INDEX jobs_running_ckey ON warden.jobs USING btree (concurrency_key) WHERE ((state = 'running'::text) AND (concurrency_key IS NOT NULL));

-- index jobs_running_worker
CREATE INDEX jobs_running_worker ON warden.jobs USING btree (worker_id) WHERE ((state = 'running'::text) AND (worker_id IS NOT NULL));

-- index jobs_state
CREATE INDEX jobs_state ON warden.jobs USING btree (state, id) WHERE (state <> ALL (ARRAY['running'::text, 'available'::text]));

-- index leaders_pkey
CREATE UNIQUE INDEX leaders_pkey ON warden.leaders USING btree (name);

-- index metrics_retired_pkey
CREATE UNIQUE INDEX metrics_retired_pkey ON warden.metrics_retired USING btree (series);

-- index nodes_pkey
CREATE UNIQUE INDEX nodes_pkey ON warden.nodes USING btree (name);

-- index queue_limits_pkey
CREATE UNIQUE INDEX queue_limits_pkey ON warden.queue_limits USING btree (queue);

-- index queue_pauses_pkey
CREATE UNIQUE INDEX queue_pauses_pkey ON warden.queue_pauses USING btree (queue);

-- index queue_starts_pkey
CREATE UNIQUE INDEX queue_starts_pkey ON warden.queue_starts USING btree (queue, at);

-- index schema_version_pkey
CREATE UNIQUE INDEX schema_version_pkey ON warden.schema_version USING btree (version);

-- index workers_live_name
CREATE UNIQUE INDEX workers_live_name ON warden.workers USING btree (name) WHERE (state = ANY (ARRAY['active'::text, 'draining'::text]));

-- index workers_node
CREATE INDEX workers_node ON warden.workers USING btree (node);

-- index workers_pkey
CREATE UNIQUE INDEX workers_pkey ON warden.workers USING btree (id);

-- table api_tokens
CREATE TABLE warden.api_tokens (
  id bigint NOT NULL DEFAULT nextval('warden.api_tokens_id_seq'::regclass),
  name text NOT NULL,
  scope text NOT NULL,
  hash text NOT NULL,
  created_at bigint NOT NULL,
  revoked_at bigint,
  last_used_at bigint,
  expires_at bigint
);

-- table attempts
CREATE TABLE warden.attempts (
  job_id bigint NOT NULL,
  attempt integer NOT NULL,
  worker_id bigint NOT NULL,
  lease_token bigint NOT NULL,
  claimed_at bigint NOT NULL,
  started_at bigint,
  finished_at bigint,
  outcome text NOT NULL DEFAULT 'running'::text,
  error_message text,
  exit_code integer,
  signal integer,
  stderr_tail text,
  stdout_tail text,
  lost_by text,
  runnable_at bigint
);

-- table audit_log
CREATE TABLE warden.audit_log (
  id bigint NOT NULL DEFAULT nextval('warden.audit_log_id_seq'::regclass),
  at bigint NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  target text NOT NULL,
  count bigint NOT NULL
);

-- table bulk_ops
CREATE TABLE warden.bulk_ops (
  id bigint NOT NULL DEFAULT nextval('warden.bulk_ops_id_seq'::regclass),
  action text NOT NULL,
  filter text NOT NULL,
  actor text NOT NULL,
  state text NOT NULL,
  high_water bigint NOT NULL,
  cursor bigint NOT NULL,
  total bigint NOT NULL,
  done bigint NOT NULL DEFAULT 0,
  skipped bigint NOT NULL DEFAULT 0,
  batches integer NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  finished_at bigint,
  owner text,
  lease_expires_at bigint,
  fresh boolean NOT NULL DEFAULT false
);

-- table fenced_writes
CREATE TABLE warden.fenced_writes (
  id bigint GENERATED BY DEFAULT AS IDENTITY NOT NULL,
  job_id bigint NOT NULL,
  lease_token bigint NOT NULL,
  worker_id bigint NOT NULL,
  at bigint NOT NULL,
  what text NOT NULL
);

-- table job_actions
CREATE TABLE warden.job_actions (
  id bigint GENERATED BY DEFAULT AS IDENTITY NOT NULL,
  job_id bigint NOT NULL,
  at bigint NOT NULL,
  action text NOT NULL,
  actor text NOT NULL,
  op_id bigint,
  fresh boolean NOT NULL DEFAULT false,
  from_state text NOT NULL,
  finished_at bigint,
  last_error text,
  charged integer NOT NULL,
  max_attempts integer NOT NULL,
  crashes integer NOT NULL,
  max_crashes integer NOT NULL
);

-- table job_count_deltas
CREATE TABLE warden.job_count_deltas (
  queue text NOT NULL,
  state text NOT NULL,
  task text NOT NULL,
  command boolean NOT NULL,
  n bigint NOT NULL
);

-- table job_counts
CREATE TABLE warden.job_counts (
  queue text NOT NULL,
  state text NOT NULL,
  task text NOT NULL,
  command boolean NOT NULL,
  n bigint NOT NULL
);

-- table jobs
CREATE TABLE warden.jobs (
  id bigint GENERATED BY DEFAULT AS IDENTITY NOT NULL,
  queue text NOT NULL,
  task text NOT NULL,
  command text NOT NULL DEFAULT ''::text,
  payload json NOT NULL DEFAULT '{}'::json,
  priority integer NOT NULL DEFAULT 0,
  state text NOT NULL,
  run_at bigint NOT NULL,
  attempt integer NOT NULL DEFAULT 0,
  charged integer NOT NULL DEFAULT 0,
  crashes integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 5,
  max_crashes integer NOT NULL DEFAULT 3,
  retry text NOT NULL DEFAULT 'default'::text,
  delivery text NOT NULL DEFAULT 'at_least_once'::text,
  timeout_ms bigint NOT NULL DEFAULT 1800000,
  lease_ms bigint,
  active_lease_ms bigint,
  start_deadline_at bigint,
  unique_key text,
  concurrency_key text,
  worker_id bigint,
  lease_token bigint NOT NULL DEFAULT 0,
  lease_expires_at bigint,
  started_mark boolean NOT NULL DEFAULT false,
  cancel_requested boolean NOT NULL DEFAULT false,
  last_error text,
  checkpoint json,
  result json,
  created_at bigint NOT NULL,
  started_at bigint,
  finished_at bigint,
  avoid_node text,
  avoid_until bigint
);

-- table leaders
CREATE TABLE warden.leaders (
  name text NOT NULL,
  holder bigint NOT NULL,
  expires_at bigint NOT NULL,
  ttl_ms bigint NOT NULL DEFAULT 0
);

-- table metrics_retired
CREATE TABLE warden.metrics_retired (
  series text NOT NULL,
  value double precision NOT NULL
);

-- table nodes
CREATE TABLE warden.nodes (
  name text NOT NULL,
  present boolean NOT NULL,
  enabled boolean NOT NULL,
  capacity bigint,
  updated_at bigint NOT NULL,
  removed_at bigint
);

-- table queue_limits
CREATE TABLE warden.queue_limits (
  queue text NOT NULL,
  concurrency bigint,
  rate_count bigint,
  rate_ms bigint,
  set_at bigint NOT NULL
);

-- table queue_pauses
CREATE TABLE warden.queue_pauses (
  queue text NOT NULL,
  paused_at bigint NOT NULL
);

-- table queue_starts
CREATE TABLE warden.queue_starts (
  queue text NOT NULL,
  at bigint NOT NULL,
  n bigint NOT NULL
);

-- table schema_version
CREATE TABLE warden.schema_version (
  version integer NOT NULL,
  applied_at timestamp with time zone NOT NULL DEFAULT now()
);

-- table workers
CREATE TABLE warden.workers (
  id bigint GENERATED BY DEFAULT AS IDENTITY NOT NULL,
  name text NOT NULL,
  node text NOT NULL,
  boot_id text NOT NULL,
  pid_ns text NOT NULL DEFAULT ''::text,
  pid integer NOT NULL,
  pid_start bigint NOT NULL,
  version text NOT NULL,
  queues text NOT NULL,
  tasks text NOT NULL,
  concurrency integer NOT NULL,
  state text NOT NULL,
  started_at bigint NOT NULL,
  last_heartbeat bigint NOT NULL,
  stopped_at bigint,
  death_reason text,
  lock_server_start text,
  lock_epoch bigint NOT NULL DEFAULT 0,
  allow_commands boolean NOT NULL DEFAULT false,
  metrics jsonb,
  host text NOT NULL DEFAULT ''::text,
  keepalive_ms bigint NOT NULL DEFAULT 10000
);

-- trigger warden.jobs jobs_count_delete
CREATE TRIGGER jobs_count_delete AFTER DELETE ON warden.jobs REFERENCING OLD TABLE AS old_jobs FOR EACH STATEMENT EXECUTE FUNCTION warden.job_counts_deleted();

-- trigger warden.jobs jobs_count_insert
CREATE TRIGGER jobs_count_insert AFTER INSERT ON warden.jobs REFERENCING NEW TABLE AS new_jobs FOR EACH STATEMENT EXECUTE FUNCTION warden.job_counts_inserted();

-- trigger warden.jobs jobs_count_truncate
CREATE TRIGGER jobs_count_truncate AFTER TRUNCATE ON warden.jobs FOR EACH STATEMENT EXECUTE FUNCTION warden.job_counts_truncated();

-- trigger warden.jobs jobs_count_update
CREATE TRIGGER jobs_count_update AFTER UPDATE ON warden.jobs REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs FOR EACH STATEMENT EXECUTE FUNCTION warden.job_counts_updated();

-- trigger warden.jobs jobs_notify
CREATE TRIGGER jobs_notify AFTER INSERT ON warden.jobs FOR EACH STATEMENT EXECUTE FUNCTION warden.notify_jobs();

-- view job_times
CREATE VIEW warden.job_times AS
 SELECT jobs.id,
    jobs.queue,
    jobs.task,
    jobs.state,
    jobs.attempt,
    jobs.worker_id,
    to_timestamp((((jobs.run_at)::numeric / 1000.0))::double precision) AS run_at,
    to_timestamp((((jobs.created_at)::numeric / 1000.0))::double precision) AS created_at,
    to_timestamp((((jobs.started_at)::numeric / 1000.0))::double precision) AS started_at,
    to_timestamp((((jobs.finished_at)::numeric / 1000.0))::double precision) AS finished_at,
    to_timestamp((((jobs.lease_expires_at)::numeric / 1000.0))::double precision) AS lease_expires_at,
    jobs.last_error
   FROM warden.jobs;;

