-- A hold by quantity is one call of hold_best: one statement, as a hold of
-- picked seats is (hold_seats), with the same hold_limit first and
-- hold_take last, so the customer's lock, the seat limit and the order are
-- the same. Between them it finds the places:
--
--   - In a standing area (p_section of kind standing), the first
--     p_quantity free places, locked FOR UPDATE SKIP LOCKED: parties
--     racing for the last places each take others, never more than the
--     area holds.
--   - Seated, the best block of p_quantity adjacent seats in p_category
--     (seat_blocks, best score first, one that strands no single seat
--     unless only such blocks are left), among the first 8 × p_quantity
--     free seats in best_order, eight times as many each time none fits. The block is locked FOR UPDATE SKIP LOCKED in a
--     subtransaction (lock_block): a seat another hold has locked or
--     taken meanwhile rolls it back, releasing the rest, and counts as
--     taken from then on, so concurrent holds never wait for nor fail on
--     each other.
--     Without a block of p_quantity, the best split (the largest blocks
--     first) is held when p_together is false, else offered: TFH01
--     no_block with the split's seats as the detail.
--
-- Refusals raise SQLSTATE TFH01: seat_limit (hold_limit), not_enough (the
-- free places found as the detail), no_block, unknown_category,
-- unknown_section, contended (1000 blocks tried, each taken first by
-- another hold). It answers one row per place held, best first.
CREATE OR REPLACE FUNCTION hold_best(p_event bigint, p_order uuid, p_customer text, p_session text, p_currency text,
                                     p_ttl_ms bigint, p_max_seats integer, p_quantity integer, p_category text,
                                     p_section text, p_sections text[], p_together boolean, p_wheelchair integer,
                                     p_email text)
RETURNS TABLE (expires_at timestamptz, amount text, seat_id text, section text, row_label text, seat_no integer,
               category text, kind text)
LANGUAGE plpgsql AS $$
DECLARE
    everything constant bigint := 9223372036854775807;
    v_kind   text := 'seat';
    v_cat    text := p_category;
    picked   text[];
    busy     text[] := '{}';
    got      record;
    cand     record;
    listed   boolean;
    clean    boolean;
    settle   boolean := false;
    pieces   text[];
    tries    integer := 0;
    split    text[];
    bound    bigint;
    span     integer := 8 * p_quantity;
    whole    boolean := false;
    left_    integer;
    wc_left  integer;
    k        integer;
    v_expires timestamptz;
    v_amount  text;
BEGIN
    PERFORM hold_limit(p_event, p_customer, p_max_seats, p_quantity);
    IF p_section IS NOT NULL THEN
        -- A seated section sells its (first) category unless one is named.
        SELECT s.kind, coalesce(p_category, s.category) INTO v_kind, v_cat FROM seat s
         WHERE s.event_id = p_event AND s.section = p_section AND s.status = 'AVAILABLE' LIMIT 1;
        IF NOT FOUND THEN
            -- Sold out, or no such section: the second is bad input.
            SELECT s.kind, coalesce(p_category, s.category) INTO v_kind, v_cat FROM seat s
             WHERE s.event_id = p_event AND s.section = p_section LIMIT 1;
            IF NOT FOUND THEN
                RAISE EXCEPTION USING ERRCODE = 'TFH01', MESSAGE = 'unknown_section';
            END IF;
        END IF;
    END IF;

    IF v_kind = 'standing' THEN
        SELECT array_agg(f.seat_id) INTO picked FROM (
            SELECT s.seat_id FROM seat s
             WHERE s.event_id = p_event AND s.section = p_section AND s.row_no = 0 AND s.status = 'AVAILABLE'
             ORDER BY s.row_pos LIMIT p_quantity
               FOR UPDATE SKIP LOCKED) f;
        IF coalesce(cardinality(picked), 0) < p_quantity THEN
            RAISE EXCEPTION USING ERRCODE = 'TFH01', MESSAGE = 'not_enough', DETAIL = coalesce(cardinality(picked), 0)::text;
        END IF;
    ELSE
        LOOP
            -- What others hold or lock changes under each try: a hold
            -- that cannot settle on seats, after many tries, gives up
            -- checking its neighbours, then gives up.
            IF tries > 1000 THEN
                RAISE EXCEPTION USING ERRCODE = 'TFH01', MESSAGE = 'contended';
            END IF;
            IF bound IS NULL AND NOT whole THEN
                -- The first span free seats, in best_order.
                SELECT s.best_order + 1 INTO bound FROM seat s
                 WHERE s.event_id = p_event AND s.category = v_cat AND s.status = 'AVAILABLE'
                 ORDER BY s.best_order OFFSET span LIMIT 1;
                whole := bound IS NULL;
            END IF;
            -- The best blocks, tried in turn: one that another hold
            -- took first sends this one to the next that does not
            -- overlap the seats found taken; once the list is done, it is
            -- read again with them known. After a block taken first, the
            -- list is tried in random order: the holds racing for it
            -- would otherwise all race for the next one too.
            listed := false;
            clean := false;
            FOR cand IN SELECT * FROM seat_blocks(p_event, v_cat, p_section, p_sections, p_quantity, p_wheelchair,
                                                  busy, coalesce(bound, everything), coalesce(bound + 4, everything),
                                                  whole, 16) b
                         ORDER BY b.orphan, CASE WHEN tries > 0 THEN random() END, b.companions, b.score LOOP
                -- A block that strands a seat only once none of this
                -- list's others is left: with the seats found taken it
                -- is read again, and one that strands none comes first.
                EXIT WHEN cand.orphan AND clean;
                listed := true;
                clean := clean OR NOT cand.orphan;
                CONTINUE WHEN EXISTS (SELECT 1 FROM seat s WHERE s.event_id = p_event AND s.section = cand.section
                                         AND s.row_no = cand.row_no AND s.status = 'AVAILABLE' AND s.seat_id = ANY (busy)
                                         AND s.row_pos BETWEEN cand.lo AND cand.lo + p_quantity - 1);
                tries := tries + 1;
                got := lock_block(p_event, cand.section, cand.row_no, cand.lo, cand.lo + p_quantity - 1,
                                  tries <= 100 AND NOT (cand.orphan AND settle));
                IF got.seats IS NOT NULL THEN
                    picked := got.seats;
                    EXIT;
                END IF;
                busy := busy || got.busy;
            END LOOP;
            EXIT WHEN picked IS NOT NULL;
            -- A list of blocks that each strand a seat, all refused by
            -- their neighbours' check: the next list's first is taken as
            -- it is.
            settle := listed AND NOT clean;
            CONTINUE WHEN listed;
            IF NOT whole THEN
                span := span * 8;
                bound := NULL;
                CONTINUE;
            END IF;
            -- No block of p_quantity: the largest blocks, best first, the
            -- wheelchair places' block first.
            split := '{}';
            pieces := '{}';
            left_ := p_quantity;
            wc_left := p_wheelchair;
            WHILE left_ > 0 LOOP
                k := left_;
                listed := false;
                WHILE NOT listed AND k > 0 AND k >= 2 * wc_left LOOP
                    SELECT * INTO cand FROM seat_blocks(p_event, v_cat, p_section, p_sections, k,
                                                        wc_left, busy || split, everything, everything, true, 1);
                    listed := FOUND;
                    IF NOT listed THEN
                        k := k - 1;
                    END IF;
                END LOOP;
                EXIT WHEN NOT listed;
                split := split || ARRAY(
                    SELECT s.seat_id FROM seat s
                     WHERE s.event_id = p_event AND s.section = cand.section AND s.row_no = cand.row_no
                       AND s.status = 'AVAILABLE' AND s.row_pos BETWEEN cand.lo AND cand.lo + k - 1);
                pieces := pieces || ARRAY[cand.section, cand.row_no::text, cand.lo::text, (cand.lo + k - 1)::text];
                left_ := p_quantity - cardinality(split);
                wc_left := 0;
            END LOOP;
            IF cardinality(split) = 0 AND NOT EXISTS (
                    SELECT 1 FROM seat s WHERE s.event_id = p_event AND s.category = v_cat) THEN
                RAISE EXCEPTION USING ERRCODE = 'TFH01', MESSAGE = 'unknown_category';
            END IF;
            IF left_ > 0 THEN
                RAISE EXCEPTION USING ERRCODE = 'TFH01', MESSAGE = 'not_enough', DETAIL = cardinality(split)::text;
            END IF;
            IF p_together THEN
                RAISE EXCEPTION USING ERRCODE = 'TFH01', MESSAGE = 'no_block', DETAIL = array_to_string(split, ',');
            END IF;
            -- Every piece, or none: a piece taken meanwhile releases the
            -- others.
            tries := tries + 1;
            BEGIN
                FOR i IN 1 .. cardinality(pieces) / 4 LOOP
                    got := lock_block(p_event, pieces[4 * i - 3], pieces[4 * i - 2]::int, pieces[4 * i - 1]::int,
                                      pieces[4 * i]::int, false);
                    IF got.seats IS NULL THEN
                        busy := busy || got.busy;
                        RAISE EXCEPTION USING ERRCODE = 'TFH02';
                    END IF;
                END LOOP;
                picked := split;
            EXCEPTION WHEN SQLSTATE 'TFH02' THEN
                NULL;
            END;
            EXIT WHEN picked IS NOT NULL;
        END LOOP;
    END IF;

    SELECT t.expires_at, t.amount INTO v_expires, v_amount
      FROM hold_take(p_event, p_order, p_customer, p_session, p_currency, p_ttl_ms, p_max_seats, picked, p_email) t;
    RETURN QUERY
        SELECT v_expires, v_amount, s.seat_id, s.section, s.row_label, s.seat_no, s.category, s.kind
          FROM seat s WHERE s.event_id = p_event AND s.seat_id = ANY (picked) ORDER BY s.best_order;
END
$$;
