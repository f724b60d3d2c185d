-- hold_take ends every hold (hold_seats, hold_best), after hold_limit: the
-- PENDING order, its amount read from the places' prices first so it is
-- written once, with the limit it was held under (seat_limit, which
-- confirm_payment keeps to); then each place in the caller's order, taken
-- only if AVAILABLE or its hold expired, and recorded with its price as
-- one of the order's places. Every timestamp is the database's now().
-- p_email is the buyer's verified address (NULL: none), kept with the
-- order so the paid order's tickets can be mailed. Places not taken raise
-- SQLSTATE TFH01 seats_unavailable with them as the detail, and the hint
-- "unknown:" listing those of them that do not exist (none after the
-- colon when all exist), so the service tells bad input (400) from a
-- taken seat (409) without a second query.
CREATE OR REPLACE FUNCTION hold_take(p_event bigint, p_order uuid, p_customer text, p_session text, p_currency text,
                                     p_ttl_ms bigint, p_max_seats integer, p_seats text[], p_email text)
RETURNS TABLE (expires_at timestamptz, amount text)
LANGUAGE plpgsql AS $$
DECLARE
    total   numeric(12,2);
    expires timestamptz := now() + p_ttl_ms * interval '1 millisecond';
    seat_id_ text;
    missing text;
    unknown text;
BEGIN
    SELECT coalesce(sum(s.price), 0) INTO total FROM seat s WHERE s.event_id = p_event AND s.seat_id = ANY (p_seats);
    INSERT INTO ticket_order (id, customer_id, event_id, session_id, amount, currency, hold_expires_at, seat_limit, email)
    VALUES (p_order, p_customer, p_event, p_session, total, p_currency, expires, p_max_seats, p_email);
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
