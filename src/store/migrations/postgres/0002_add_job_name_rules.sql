-- warden.add_job keeps the name rules of `warden add`.
-- Enqueue from SQL, inside the application's own transaction: the job
-- exists exactly when the transaction commits. Returns the job id (the
-- existing live job's id when unique_key is taken).
CREATE OR REPLACE FUNCTION warden.add_job(
  task             text,
  payload          json        DEFAULT '{}',
  queue            text        DEFAULT 'default',
  priority         integer     DEFAULT 0,
  run_at           timestamptz DEFAULT NULL,
  max_attempts     integer     DEFAULT 5,
  unique_key       text        DEFAULT NULL,
  concurrency_key  text        DEFAULT NULL,
  timeout          interval    DEFAULT '30 minutes',
  delivery         text        DEFAULT 'at_least_once',
  retry            text        DEFAULT 'default',
  lease            interval    DEFAULT NULL,
  start_deadline   interval    DEFAULT NULL,
  max_crashes      integer     DEFAULT 3
) RETURNS bigint LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  now_ms bigint := warden.now_ms();
  at_ms  bigint := coalesce((extract(epoch FROM run_at) * 1000)::bigint, now_ms);
  new_id bigint;
BEGIN
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
END $$;
