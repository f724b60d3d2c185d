-- +goose Up
-- An order remembers the seat limit it was held under (hold_seats's
-- p_max_seats: a presale's own limit, or the event's), and a payment
-- checks that limit, not the one its caller passes, when it is lower. A
-- payment that completes after its hold expired re-takes the seats, and
-- checked the event's limit: a presale customer (limit 2) whose hold
-- expired, who held again and paid, ended with 4 seats when the first
-- payment completed late. The card's limit follows the same figure.
--
-- hold_seats is 00009's, writing the column. confirm_payment keeps its
-- signature for replicas of the previous version: the body of 00011 is
-- renamed confirm_payment_within, and confirm_payment calls it with the
-- lower of the two limits. The limit never changes once written, so it is
-- read before the order's lock. Orders held before this have no limit
-- (NULL) and are checked as before.
ALTER TABLE ticket_order ADD COLUMN seat_limit integer;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION hold_seats(p_event bigint, p_order uuid, p_customer text, p_session text, p_currency text,
                           p_ttl_ms bigint, p_max_seats integer, p_seats text[])
RETURNS TABLE (expires_at timestamptz, amount text)
LANGUAGE plpgsql AS $$
DECLARE
    held    bigint;
    total   numeric(12,2);
    expires timestamptz := now() + p_ttl_ms * interval '1 millisecond';
    seat_id_ text;
    missing text;
    unknown text;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_customer, p_event));
    SELECT count(*) INTO held FROM seat s
     WHERE s.event_id = p_event AND s.held_by = p_customer
       AND (s.status = 'SOLD' OR (s.status = 'HELD' AND s.hold_expires_at > now()));
    IF held + cardinality(p_seats) > p_max_seats THEN
        RAISE EXCEPTION USING ERRCODE = 'TFH01', MESSAGE = 'seat_limit', DETAIL = held::text;
    END IF;
    SELECT coalesce(sum(s.price), 0) INTO total FROM seat s WHERE s.event_id = p_event AND s.seat_id = ANY (p_seats);
    INSERT INTO ticket_order (id, customer_id, event_id, session_id, amount, currency, hold_expires_at, seat_limit)
    VALUES (p_order, p_customer, p_event, p_session, total, p_currency, expires, p_max_seats);
    FOREACH seat_id_ IN ARRAY p_seats LOOP
        WITH taken AS (
            UPDATE seat s SET status = 'HELD', held_by = p_customer, order_id = p_order,
                   hold_expires_at = expires, updated_at = now()
             WHERE s.event_id = p_event AND s.seat_id = seat_id_
               AND (s.status = 'AVAILABLE' OR (s.status = 'HELD' AND s.hold_expires_at <= now()))
            RETURNING s.seat_id, s.section, s.price)
        INSERT INTO order_seat (order_id, event_id, seat_id, section, price)
        SELECT p_order, p_event, t.seat_id, t.section, t.price FROM taken t;
        IF NOT FOUND THEN
            missing := concat_ws(',', missing, seat_id_);
        END IF;
    END LOOP;
    IF missing IS NOT NULL THEN
        SELECT string_agg(m, ',') INTO unknown FROM unnest(string_to_array(missing, ',')) m
         WHERE NOT EXISTS (SELECT 1 FROM seat s WHERE s.event_id = p_event AND s.seat_id = m);
        RAISE EXCEPTION USING ERRCODE = 'TFH01', MESSAGE = 'seats_unavailable', DETAIL = missing,
              HINT = 'unknown:' || coalesce(unknown, '');
    END IF;
    RETURN QUERY SELECT expires, total::text;
END
$$;
-- +goose StatementEnd

ALTER FUNCTION confirm_payment(bigint, uuid, text, text, numeric, text, integer, text) RENAME TO confirm_payment_within;

-- +goose StatementBegin
CREATE FUNCTION confirm_payment(p_event bigint, p_order uuid, p_key text, p_payment text, p_amount numeric,
                                p_currency text, p_max_seats integer, p_card text)
RETURNS TABLE (r_fresh boolean, r_event bigint, r_customer text, r_session text, r_status text, r_amount text,
               r_currency text, r_expires timestamptz, r_created timestamptz, r_payment text, r_settled timestamptz,
               r_reason text, r_seats text[], r_extra_payment text,
               r_extra_amount text, r_extra_currency text, r_extra_reason text, r_extra_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    held_under integer;
BEGIN
    SELECT t.seat_limit INTO held_under FROM ticket_order t WHERE t.id = p_order AND t.event_id = p_event;
    RETURN QUERY SELECT * FROM confirm_payment_within(p_event, p_order, p_key, p_payment, p_amount, p_currency,
                                                      least(p_max_seats, held_under), p_card);
END
$$;
-- +goose StatementEnd

-- +goose Down
-- The column stays and hold_seats goes on writing it: the code before
-- this reads neither.
DROP FUNCTION confirm_payment(bigint, uuid, text, text, numeric, text, integer, text);
ALTER FUNCTION confirm_payment_within(bigint, uuid, text, text, numeric, text, integer, text) RENAME TO confirm_payment;
