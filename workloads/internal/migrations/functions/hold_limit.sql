-- hold_limit opens every hold (hold_seats, hold_best): the customer's
-- advisory lock (the one confirm_payment takes, so holds and payments
-- cannot add up past the limit), then the limit over the customer's SOLD
-- and live HELD places, which p_count more may not pass. A refusal raises
-- SQLSTATE TFH01 seat_limit with the places the customer already has as
-- the detail.
CREATE OR REPLACE FUNCTION hold_limit(p_event bigint, p_customer text, p_max_seats integer, p_count integer)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    held bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_customer, p_event));
    SELECT count(*) INTO held FROM seat s
     WHERE s.event_id = p_event AND s.held_by = p_customer
       AND (s.status = 'SOLD' OR (s.status = 'HELD' AND s.hold_expires_at > now()));
    IF held + p_count > p_max_seats THEN
        RAISE EXCEPTION USING ERRCODE = 'TFH01', MESSAGE = 'seat_limit', DETAIL = held::text;
    END IF;
END
$$;
