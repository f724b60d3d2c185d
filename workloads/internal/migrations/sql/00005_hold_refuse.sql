-- +goose Up
-- A hold is one pipelined batch, and so one implicit transaction, with
-- every check made by the database. Plain SQL cannot raise an error, so the
-- checks call hold_refuse, which ends the batch, rolling the transaction
-- back, when refused is true. SQLSTATE TFH01 with the reason as the message
-- tells the service which check refused; the detail carries its figures.
-- +goose StatementBegin
CREATE FUNCTION hold_refuse(refused boolean, reason text, detail text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF refused THEN
        RAISE EXCEPTION USING ERRCODE = 'TFH01', MESSAGE = reason, DETAIL = detail;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION hold_refuse(boolean, text, text);
