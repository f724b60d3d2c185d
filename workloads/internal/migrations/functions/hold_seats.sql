-- A hold of picked seats is one call of hold_seats: one statement, so one
-- round trip and one implicit transaction, in which the database makes
-- every check. It is hold_limit (the customer's lock and seat limit), then
-- hold_take (the PENDING order and each seat in the caller's sorted
-- order, so holds cannot deadlock); either raises SQLSTATE TFH01 with the
-- reason as the message when it refuses.
CREATE OR REPLACE FUNCTION hold_seats(p_event bigint, p_order uuid, p_customer text, p_session text, p_currency text,
                                      p_ttl_ms bigint, p_max_seats integer, p_seats text[], p_email text)
RETURNS TABLE (expires_at timestamptz, amount text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM hold_limit(p_event, p_customer, p_max_seats, cardinality(p_seats));
    RETURN QUERY SELECT * FROM hold_take(p_event, p_order, p_customer, p_session, p_currency, p_ttl_ms, p_max_seats, p_seats, p_email);
END
$$;
