-- outbox_notify wakes the relay as soon as an outbox row commits: the
-- trigger's NOTIFY is delivered at commit, so the relay never reads a row
-- before it is visible.
CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('ticketfair_outbox', NEW.id::text);
    RETURN NULL;
END $$;

-- The trigger is created here, with its function, because the versioned
-- migrations run first. It is created only when missing: CREATE OR
-- REPLACE TRIGGER would lock a live outbox against inserts each time the
-- migration Job runs again.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'outbox'::regclass AND tgname = 'outbox_notify') THEN
        CREATE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION outbox_notify();
    END IF;
END $$;
