-- Notices by e-mail (README "Notices by e-mail"): an e-mail endpoint is sent nothing but its
-- confirmation until a person confirms its address. Webhooks need no confirmation: every one
-- set before counts as confirmed when it was set. Times are Unix seconds.
ALTER TABLE notice_endpoints ADD COLUMN confirmed_at INTEGER;
UPDATE notice_endpoints SET confirmed_at = created_at;
