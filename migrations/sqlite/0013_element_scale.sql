-- The CSV of every client (README "Everyone's migration") reads each client's uses of elements
-- with its other rows, in (tenant, subject) order.
CREATE INDEX element_clients_by_client ON element_clients (tenant, subject);
