// SQLite 3, for tests and benchmarks only: the oracle the SQL subset must agree with.
// No product target depends on this module.
#include <sqlite3.h>
