-- +goose Up
-- Who holds each ticket now, and which code of it is valid: a transfer
-- hands the ticket to another person with a new code (generation + 1) and
-- the old one is refused at the gate. revoked_at marks a ticket that admits
-- nobody any more (a refunded or cancelled order).
ALTER TABLE ticket
    ADD COLUMN holder_id    text,
    ADD COLUMN holder_email text,
    ADD COLUMN generation   int NOT NULL DEFAULT 0,
    ADD COLUMN revoked_at   timestamptz;
-- A ticket handed on by email alone has no holder id until its recipient
-- signs in with that (verified) address.
UPDATE ticket SET holder_id = customer_id;
ALTER TABLE ticket ADD CONSTRAINT ticket_holder_known CHECK (holder_id IS NOT NULL OR holder_email IS NOT NULL);
CREATE INDEX ticket_holder ON ticket (holder_id);
CREATE INDEX ticket_holder_email ON ticket (lower(holder_email)) WHERE holder_email IS NOT NULL;

-- Every change of hands, oldest first: generation n was handed from
-- from_holder to the recipient.
CREATE TABLE ticket_transfer (
    ticket_id      text        NOT NULL REFERENCES ticket,
    generation     int         NOT NULL,
    from_holder    text        NOT NULL,
    to_holder      text,
    to_email       text,
    transferred_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ticket_id, generation),
    CONSTRAINT ticket_transfer_recipient CHECK (to_holder IS NOT NULL OR to_email IS NOT NULL)
);

-- One admission per ticket, whichever gate scans it first: the primary key
-- is what makes twenty gates scanning one code at once admit one person.
CREATE TABLE checkin (
    ticket_id   text        PRIMARY KEY REFERENCES ticket,
    event_id    bigint      NOT NULL,
    gate        text        NOT NULL,
    generation  int         NOT NULL,
    scanned_at  timestamptz NOT NULL,            -- the gate's clock (offline scans sync later)
    recorded_at timestamptz NOT NULL DEFAULT now(),
    offline     boolean     NOT NULL DEFAULT false
);
CREATE INDEX checkin_event ON checkin (event_id, scanned_at);

-- A code admitted by a gate that was offline while another gate had
-- already admitted it: two people got in on one ticket. Reported, never
-- dropped; one row per offline scan however often the gate resyncs.
CREATE TABLE checkin_conflict (
    id          bigserial   PRIMARY KEY,
    ticket_id   text        NOT NULL REFERENCES ticket,
    event_id    bigint      NOT NULL,
    gate        text        NOT NULL,
    scanned_at  timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT checkin_conflict_scan UNIQUE (ticket_id, gate, scanned_at)
);
CREATE INDEX checkin_conflict_event ON checkin_conflict (event_id);

-- +goose Down
DROP TABLE checkin_conflict;
DROP TABLE checkin;
DROP TABLE ticket_transfer;
DROP INDEX ticket_holder_email;
DROP INDEX ticket_holder;
ALTER TABLE ticket DROP CONSTRAINT ticket_holder_known;
ALTER TABLE ticket DROP COLUMN revoked_at, DROP COLUMN generation, DROP COLUMN holder_email, DROP COLUMN holder_id;
