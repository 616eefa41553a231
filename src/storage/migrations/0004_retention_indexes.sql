-- Retention pruning (decisions.md "Retention") deletes finished outbox rows and old alert receipts in small
-- batches; these indexes let each batch find its rows without scanning the tables.
CREATE INDEX outbox_finished_idx ON outbox ((coalesce(delivered_at, failed_at)))
  WHERE delivered_at IS NOT NULL OR failed_at IS NOT NULL;
CREATE INDEX alert_receipts_received_idx ON alert_receipts (received_at);
