-- +goose Up
-- A hold in one round trip: the whole hold is this function, called as one
-- statement (its own transaction). Inside a function each statement takes
-- a fresh snapshot (READ COMMITTED), so the limit is counted after the
-- customer's lock is held, as the earlier multi-statement transaction did.
-- +goose StatementBegin
CREATE FUNCTION hold_seats(p_event bigint, p_customer text, p_session text, p_order uuid, p_seats text[],
                           p_ttl_ms bigint, p_max int, p_currency text,
                           OUT o_result text, OUT o_already bigint, OUT o_unavailable text[],
                           OUT o_expires_at timestamptz, OUT o_amount text)
LANGUAGE plpgsql AS $$
DECLARE
    v_free   text[];
    v_amount numeric;
BEGIN
    -- The customer's lock: parallel holds of one customer cannot add up
    -- past the limit.
    PERFORM pg_advisory_xact_lock(hashtextextended(p_customer, p_event));
    SELECT count(*) INTO o_already FROM seat
     WHERE event_id = p_event AND held_by = p_customer
       AND (status = 'SOLD' OR (status = 'HELD' AND hold_expires_at > now()));
    IF o_already + cardinality(p_seats) > p_max THEN
        o_result := 'limit';
        RETURN;
    END IF;
    -- Lock the seats in sorted (byte) order, the order every writer of seats
    -- uses, so holds cannot deadlock each other; read under the locks which
    -- are free and what they cost.
    SELECT coalesce(array_agg(l.seat_id) FILTER (WHERE l.free), '{}'), coalesce(sum(l.price) FILTER (WHERE l.free), 0)
      INTO v_free, v_amount
      FROM (SELECT seat_id, price, status = 'AVAILABLE' OR (status = 'HELD' AND hold_expires_at <= now()) AS free
              FROM seat WHERE event_id = p_event AND seat_id = ANY (p_seats)
             ORDER BY seat_id COLLATE "C" FOR UPDATE) l;
    -- All or nothing: any seat taken (or unknown) and nothing is written.
    IF cardinality(v_free) < cardinality(p_seats) THEN
        SELECT array_agg(u.id ORDER BY u.id COLLATE "C") INTO o_unavailable
          FROM unnest(p_seats) AS u(id) WHERE u.id <> ALL (v_free);
        o_result := 'unavailable';
        RETURN;
    END IF;
    o_amount := v_amount::text;
    INSERT INTO ticket_order (id, customer_id, event_id, session_id, amount, currency, hold_expires_at)
    VALUES (p_order, p_customer, p_event, p_session, v_amount, p_currency, now() + p_ttl_ms * interval '1 millisecond')
    RETURNING hold_expires_at INTO o_expires_at;
    -- The seats are locked and free: update them by key.
    WITH held AS (
        UPDATE seat SET status = 'HELD', held_by = p_customer, order_id = p_order,
                        hold_expires_at = o_expires_at, updated_at = now()
         WHERE event_id = p_event AND seat_id = ANY (p_seats)
        RETURNING seat_id, section, price
    )
    INSERT INTO order_seat (order_id, event_id, seat_id, section, price)
    SELECT p_order, p_event, seat_id, section, price FROM held;
    o_result := 'held';
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION hold_seats(bigint, text, text, uuid, text[], bigint, int, text);
