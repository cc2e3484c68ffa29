-- A write that must not leave a bound broken ends its batch with an insert here, made only when the bound is broken:
-- the table takes no row, so that insert fails and D1 rolls the whole batch back. It closes the gap between a
-- bound's check and the write for bounds one conditional statement cannot hold, such as a workspace's tool
-- definitions, written by a batch of many statements (worker/services/indexing.ts).
CREATE TABLE bound_guards (
  bound TEXT NOT NULL,
  CONSTRAINT bound_broken CHECK (0)
);
