-- lock_block locks the free seats of row_pos p_lo to p_hi of one row (its
-- section and row_no) for hold_best, all or none,
-- without waiting: FOR UPDATE SKIP LOCKED in a subtransaction, rolled back
-- (releasing the seats it did lock) when another transaction holds or has
-- taken any of them. With p_strands the block is also given up when it
-- would strand a seat next to it: the neighbour is free but the seat
-- beyond it is not, counting the seats other holds have locked and not
-- yet taken (probed FOR SHARE SKIP LOCKED in a subtransaction always
-- rolled back), which the snapshot best available chose from could not see. It
-- answers the seats locked, or NULL and in busy those it found locked by
-- others.
CREATE OR REPLACE FUNCTION lock_block(p_event bigint, p_section text, p_row integer, p_lo integer, p_hi integer,
                                      p_strands boolean, OUT seats text[], OUT busy text[])
LANGUAGE plpgsql AS $$
DECLARE
    got      text[];
    near_ids text[];
    near_pos integer[];
    free_ids text[];
    stranded text;
BEGIN
    -- The row's seats not sold: the block, and two on either side.
    SELECT array_agg(s.seat_id) FILTER (WHERE s.row_pos BETWEEN p_lo AND p_hi),
           array_agg(s.seat_id) FILTER (WHERE s.row_pos NOT BETWEEN p_lo AND p_hi),
           array_agg(s.row_pos) FILTER (WHERE s.row_pos NOT BETWEEN p_lo AND p_hi)
      INTO seats, near_ids, near_pos
      FROM seat s
     WHERE s.event_id = p_event AND s.section = p_section AND s.row_no = p_row AND s.status = 'AVAILABLE'
       AND s.row_pos BETWEEN p_lo - 2 AND p_hi + 2;
    BEGIN
        SELECT array_agg(f.seat_id) INTO got FROM (
            SELECT s.seat_id FROM seat s
             WHERE s.event_id = p_event AND s.seat_id = ANY (seats)
               AND (s.status = 'AVAILABLE' OR (s.status = 'HELD' AND s.hold_expires_at <= now()))
               FOR UPDATE SKIP LOCKED) f;
        busy := array(SELECT unnest(seats) EXCEPT SELECT unnest(got));
        IF cardinality(got) IS DISTINCT FROM p_hi - p_lo + 1 THEN
            RAISE EXCEPTION USING ERRCODE = 'TFH02';
        END IF;
        IF p_strands AND near_ids IS NOT NULL THEN
            BEGIN
                -- FOR SHARE: another hold's probe does not count as a
                -- lock, a block another hold has locked does.
                SELECT array_agg(f.seat_id) INTO free_ids FROM (
                    SELECT s.seat_id FROM seat s
                     WHERE s.event_id = p_event AND s.seat_id = ANY (near_ids)
                       AND (s.status = 'AVAILABLE' OR (s.status = 'HELD' AND s.hold_expires_at <= now()))
                       FOR SHARE SKIP LOCKED) f;
                RAISE EXCEPTION USING ERRCODE = 'TFH02';
            EXCEPTION WHEN SQLSTATE 'TFH02' THEN
                NULL;
            END;
            SELECT n.id INTO stranded
              FROM unnest(near_ids, near_pos) n(id, pos)
             WHERE n.id = ANY (free_ids)
               AND ((n.pos = p_lo - 1 AND NOT EXISTS (SELECT 1 FROM unnest(near_ids, near_pos) m(id, pos)
                                                       WHERE m.pos = p_lo - 2 AND m.id = ANY (free_ids)))
                 OR (n.pos = p_hi + 1 AND NOT EXISTS (SELECT 1 FROM unnest(near_ids, near_pos) m(id, pos)
                                                       WHERE m.pos = p_hi + 2 AND m.id = ANY (free_ids))))
             LIMIT 1;
            IF stranded IS NOT NULL THEN
                -- The neighbours locked by others; none when the seat
                -- beyond was taken since the caller's snapshot, which its
                -- next one sees.
                busy := array(SELECT unnest(near_ids) EXCEPT SELECT unnest(coalesce(free_ids, '{}')));
                RAISE EXCEPTION USING ERRCODE = 'TFH02';
            END IF;
        END IF;
    EXCEPTION WHEN SQLSTATE 'TFH02' THEN
        seats := NULL;
        RETURN;
    END;
    busy := '{}';
END
$$;
