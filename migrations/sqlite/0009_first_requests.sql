-- When each client's first answered request to each version came (README "Deciding a sunset"):
-- with TANDEM_V<N>_NEW_CLIENTS=refuse, a client first seen after the deprecation is refused.
-- Rows from before this column existed keep NULL: those clients came before, and are served.
ALTER TABLE client_versions ADD COLUMN first_request INTEGER;
