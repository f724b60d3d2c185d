-- A payment is one call of confirm_payment: one statement, so one round
-- trip and one implicit transaction, as a hold is. The rules:
-- * the order settled under the payment's key, the payment as an extra
--   payment, then the order, locked;
-- * a key already used for another order, or used with other payment
--   figures, is refused; a repeat is answered as it was first, without
--   writing;
-- * a payment for an order another payment settled is recorded in
--   extra_payment and refunded (order_settled); the settling payment under
--   another key is refused;
-- * otherwise the customer's lock (the one holds take) and the limit over
--   their other SOLD and live HELD seats; with a card fingerprint
--   (p_card, from the payment provider), after it the card's lock and the
--   seats of the event's PAID orders with the card, whoever the customer
--   (card_limit: a scalper's many accounts pay with few cards). Both
--   limits are the lower of p_max_seats and the limit the order was held
--   under (hold_seats's seat_limit: a presale's own). Then the order's
--   seats, locked in the byte order holds lock them in, must each still
--   be the order's or AVAILABLE. The seats are SOLD, the order PAID (with
--   the card, the one place the card limit reads it) and a ticket-issued
--   row written; or the seats the order still holds are freed, the order
--   becomes REFUND_REQUIRED and a refund-requested row is written for what
--   was paid (seat_limit, card_limit, seat_taken, amount_mismatch).
-- The seats are locked before any is written, so a refused sale needs no
-- savepoint, and no row gets a MultiXact from one.
--
-- A refusal raises SQLSTATE TFC01 with key_reused, not_found or
-- order_settled as the message and writes nothing. The answer is one row:
-- whether this call settled anything, the order with its seats in byte
-- order, and the extra payment refunded, if the payment was one. Every
-- timestamp is the database's now(); the events' times are written in UTC
-- as the service writes them, with the topics and fields of
-- internal/events.
CREATE OR REPLACE FUNCTION confirm_payment(p_event bigint, p_order uuid, p_key text, p_payment text, p_amount numeric,
                                           p_currency text, p_max_seats integer, p_card text)
RETURNS TABLE (r_fresh boolean, r_event bigint, r_customer text, r_session text, r_status text, r_amount text,
               r_currency text, r_expires timestamptz, r_created timestamptz, r_payment text, r_settled timestamptz,
               r_reason text, r_seats text[], r_extra_payment text,
               r_extra_amount text, r_extra_currency text, r_extra_reason text, r_extra_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    o         ticket_order;
    x         extra_payment;
    key_order uuid;
    fresh     boolean := true;
    refusal   text;
    others    bigint;
    on_card   bigint := 0;
    seat_cap  integer;
    seat_ids  text[];
    n         integer;
    sellable  integer;
    seats     jsonb;
    stamp     text := to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
BEGIN
    SELECT t.id INTO key_order FROM ticket_order t WHERE t.idempotency_key = p_key;
    SELECT * INTO x FROM extra_payment e WHERE e.payment_id = p_payment OR e.idempotency_key = p_key LIMIT 1;
    SELECT * INTO o FROM ticket_order t WHERE t.id = p_order AND t.event_id = p_event FOR UPDATE;
    -- The order's seats, as an array: the statements below then read
    -- them by primary key whatever the statistics of a sale's first
    -- minute make of a join.
    SELECT array_agg(os.seat_id ORDER BY os.seat_id COLLATE "C") INTO seat_ids
      FROM order_seat os WHERE os.order_id = o.id;
    n := coalesce(cardinality(seat_ids), 0);
    -- The limit the order was held under, when lower (NULL: held before
    -- orders kept one).
    seat_cap := least(p_max_seats, o.seat_limit);
    IF key_order <> p_order THEN
        RAISE EXCEPTION USING ERRCODE = 'TFC01', MESSAGE = 'key_reused';
    END IF;
    IF x.payment_id IS NOT NULL THEN
        -- A repeat of an extra payment.
        IF x.payment_id <> p_payment OR x.idempotency_key <> p_key OR x.order_id <> p_order
           OR x.amount <> p_amount OR x.currency <> p_currency THEN
            RAISE EXCEPTION USING ERRCODE = 'TFC01', MESSAGE = 'key_reused';
        END IF;
        IF o.id IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'TFC01', MESSAGE = 'not_found';
        END IF;
        fresh := false;
    ELSIF o.id IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'TFC01', MESSAGE = 'not_found';
    ELSIF o.idempotency_key = p_key THEN
        -- A repeat of the payment that settled the order.
        IF o.paid_amount IS DISTINCT FROM p_amount OR o.paid_currency IS DISTINCT FROM p_currency
           OR o.payment_id IS DISTINCT FROM p_payment THEN
            RAISE EXCEPTION USING ERRCODE = 'TFC01', MESSAGE = 'key_reused';
        END IF;
        fresh := false;
    ELSIF o.idempotency_key IS NOT NULL THEN
        -- The order is settled: this payment buys nothing. A racing
        -- duplicate hits extra_payment's keys (23505); run again, it
        -- finds the row and repeats the answer.
        IF o.payment_id = p_payment THEN
            RAISE EXCEPTION USING ERRCODE = 'TFC01', MESSAGE = 'order_settled';
        END IF;
        INSERT INTO extra_payment (payment_id, idempotency_key, order_id, amount, currency, reason)
        VALUES (p_payment, p_key, p_order, p_amount, p_currency, 'order_settled') RETURNING * INTO x;
        INSERT INTO outbox (topic, key, event_type, payload)
        VALUES ('refund-requested', p_order::text, 'refund-requested', jsonb_build_object(
            'orderId', p_order, 'eventId', o.event_id, 'customerId', o.customer_id, 'paymentId', p_payment,
            'amount', x.amount::text, 'currency', p_currency, 'reason', x.reason, 'at', stamp));
    ELSE
        PERFORM pg_advisory_xact_lock(hashtextextended(o.customer_id, p_event));
        refusal := 'amount_mismatch';
        IF p_amount = o.amount AND p_currency = o.currency THEN
            SELECT count(*) INTO others FROM seat s
             WHERE s.event_id = p_event AND s.held_by = o.customer_id AND s.order_id <> p_order
               AND (s.status = 'SOLD' OR (s.status = 'HELD' AND s.hold_expires_at > now()));
            IF p_card IS NOT NULL THEN
                -- After the customer's lock, always in this order: every
                -- payment with the card waits here, whoever pays.
                PERFORM pg_advisory_xact_lock(hashtextextended('card:' || p_card, p_event));
                SELECT count(*) INTO on_card FROM ticket_order t JOIN order_seat os ON os.order_id = t.id
                 WHERE t.event_id = p_event AND t.card_fingerprint = p_card AND t.status = 'PAID';
            END IF;
            IF others + n > seat_cap THEN
                refusal := 'seat_limit';
            ELSIF on_card + n > seat_cap THEN
                refusal := 'card_limit';
            ELSE
                SELECT count(*) FILTER (WHERE l.status = 'AVAILABLE' OR (l.status = 'HELD' AND l.order_id = p_order))
                  INTO sellable
                  FROM (SELECT s.status, s.order_id FROM seat s
                         WHERE s.event_id = p_event AND s.seat_id = ANY (seat_ids)
                         ORDER BY s.seat_id COLLATE "C" FOR UPDATE) l;
                IF sellable = n THEN
                    UPDATE seat s SET status = 'SOLD', held_by = o.customer_id, order_id = p_order,
                           hold_expires_at = NULL, updated_at = now()
                     WHERE s.event_id = p_event AND s.seat_id = ANY (seat_ids);
                    refusal := NULL;
                ELSE
                    refusal := 'seat_taken';
                END IF;
            END IF;
        END IF;
        IF refusal IS NULL THEN
            UPDATE ticket_order t SET status = 'PAID', idempotency_key = p_key, payment_id = p_payment,
                   paid_amount = p_amount, paid_currency = p_currency, card_fingerprint = p_card,
                   settled_at = now(), updated_at = now()
             WHERE t.id = p_order RETURNING * INTO o;
            SELECT jsonb_agg(jsonb_build_object('seatId', os.seat_id, 'section', os.section, 'price', os.price::text)
                             ORDER BY os.seat_id COLLATE "C")
              INTO seats FROM order_seat os WHERE os.order_id = p_order;
            INSERT INTO outbox (topic, key, event_type, payload)
            VALUES ('ticket-issued', p_order::text, 'ticket-issued', jsonb_build_object(
                'orderId', p_order, 'eventId', o.event_id, 'customerId', o.customer_id, 'paymentId', p_payment,
                'amount', o.amount::text, 'currency', o.currency, 'seats', coalesce(seats, '[]'), 'paidAt', stamp)
                || CASE WHEN o.email IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('email', o.email) END);
        ELSE
            -- The order's seats it still holds (a sold seat has no
            -- expiry: seat_hold_expiry), locked in byte order.
            UPDATE seat s SET status = 'AVAILABLE', held_by = NULL, order_id = NULL, hold_expires_at = NULL,
                   updated_at = now()
             WHERE s.event_id = p_event AND s.seat_id IN (
                    SELECT h.seat_id FROM seat h
                     WHERE h.event_id = p_event AND h.seat_id = ANY (seat_ids)
                       AND h.order_id = p_order AND h.hold_expires_at IS NOT NULL
                     ORDER BY h.seat_id COLLATE "C" FOR UPDATE)
               AND s.order_id = p_order AND s.hold_expires_at IS NOT NULL;
            UPDATE ticket_order t SET status = 'REFUND_REQUIRED', idempotency_key = p_key, payment_id = p_payment,
                   paid_amount = p_amount, paid_currency = p_currency, refund_reason = refusal, settled_at = now(),
                   updated_at = now()
             WHERE t.id = p_order RETURNING * INTO o;
            INSERT INTO outbox (topic, key, event_type, payload)
            VALUES ('refund-requested', p_order::text, 'refund-requested', jsonb_build_object(
                'orderId', p_order, 'eventId', o.event_id, 'customerId', o.customer_id, 'paymentId', p_payment,
                'amount', o.paid_amount::text, 'currency', p_currency, 'reason', refusal, 'at', stamp));
        END IF;
    END IF;
    RETURN QUERY
    SELECT fresh, o.event_id, o.customer_id, o.session_id, o.status, o.amount::text, o.currency, o.hold_expires_at,
           o.created_at, o.payment_id, o.settled_at, o.refund_reason,
           coalesce(seat_ids, '{}'), x.payment_id, x.amount::text, x.currency, x.reason, x.created_at;
END
$$;
