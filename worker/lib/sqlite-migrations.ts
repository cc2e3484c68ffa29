/**
 * Ordered schema migrations for a Durable Object's SQLite storage. Step N
 * (1-based) moves the schema from version N-1 to N; the version is the number
 * of steps. Each step and the record that it ran commit in one transaction, so
 * a step runs exactly once per object, even if the object is evicted mid-way.
 *
 * Steps are additive (new tables, new nullable columns): code rolled back to an
 * older version keeps working on the newer schema, so an object whose version
 * is ahead of the code is left as it is.
 *
 * The applied versions are kept in a table, not in `PRAGMA user_version`:
 * workerd refuses that pragma in Durable Object SQLite (SQLITE_AUTH).
 */
export type Migration = readonly string[];

const HISTORY_DDL = `CREATE TABLE IF NOT EXISTS _schema_migrations (
  version    INTEGER PRIMARY KEY,
  applied_at INTEGER NOT NULL -- epoch ms
)`;

/** The highest version applied to this storage; 0 for storage no migration has run on. */
export function schemaVersion(sql: SqlStorage): number {
  sql.exec(HISTORY_DDL);
  return sql.exec<{ version: number }>("SELECT COALESCE(MAX(version), 0) AS version FROM _schema_migrations").one().version;
}

/** Runs the steps this storage has not had yet, in order. Returns the version it ends at. */
export function applyMigrations(storage: DurableObjectStorage, migrations: readonly Migration[]): number {
  const applied = schemaVersion(storage.sql);
  for (let version = applied + 1; version <= migrations.length; version++) {
    storage.transactionSync(() => {
      for (const statement of migrations[version - 1]!) storage.sql.exec(statement);
      storage.sql.exec("INSERT INTO _schema_migrations (version, applied_at) VALUES (?, ?)", version, Date.now());
    });
  }
  return Math.max(applied, migrations.length);
}
