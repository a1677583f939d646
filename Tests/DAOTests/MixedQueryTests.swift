@testable import DAO
import XCTest

/// Clauses combined, compared with SQLite.
final class MixedQueryTests: XCTestCase {
    func testCombinedClauses() throws {
        let d = try Differential()
        d.run(["CREATE TABLE emp (id INTEGER PRIMARY KEY, name TEXT NOT NULL, dept TEXT, salary REAL, boss INT)",
               "CREATE INDEX emp_dept ON emp (dept, salary DESC)",
               "INSERT INTO emp (name, dept, salary, boss) VALUES ('ann', 'eng', 120, NULL), ('bob', 'eng', 100, 1), ('cy', 'ops', 90, 1), ('dee', NULL, 50, 2), ('eve', 'ops', 90, 3), ('fay', 'eng', NULL, 2), ('gus', 'hr', 70.5, 1)"])
        for sql in [
            "SELECT dept, count(*) AS n, avg(salary) FROM emp GROUP BY dept ORDER BY n DESC, dept LIMIT 2",
            "SELECT dept, max(salary) - min(salary) FROM emp GROUP BY dept HAVING count(salary) > 1 ORDER BY 2 DESC",
            "SELECT DISTINCT dept FROM emp ORDER BY dept DESC LIMIT 2 OFFSET 1",
            "SELECT name FROM emp WHERE dept = 'eng' ORDER BY salary DESC",
            "SELECT name, salary FROM emp WHERE dept = 'ops' AND salary >= 90 ORDER BY name",
            "SELECT name FROM emp WHERE dept IS NULL OR salary IS NULL ORDER BY 1",
            "SELECT name, CASE WHEN salary > 95 THEN 'high' WHEN salary > 60 THEN 'mid' ELSE 'low' END AS band FROM emp ORDER BY band, name",
            "SELECT boss, group_concat(name, '+') FROM emp WHERE boss IS NOT NULL GROUP BY boss ORDER BY boss",
            "SELECT count(DISTINCT dept), count(dept), total(salary), sum(salary) / count(*) FROM emp",
            "SELECT upper(substr(name, 1, 1)) || substr(name, 2) AS cap, length(name) FROM emp ORDER BY length(name) DESC, cap LIMIT 3",
            "SELECT salary / 3, salary % 7, -salary, salary * 1.5, CAST(salary AS INTEGER) / 7 FROM emp ORDER BY id",
            "SELECT id FROM emp WHERE name LIKE '_e%' OR name GLOB '*y' ORDER BY id",
            "SELECT id FROM emp WHERE salary NOT BETWEEN 60 AND 100 ORDER BY id",
            "SELECT id FROM emp WHERE dept NOT IN ('eng', NULL) ORDER BY id",
            "SELECT id FROM emp WHERE dept IN ('eng', 'hr') AND salary > 80 ORDER BY salary DESC, id",
            "SELECT min(name), max(name), min(dept), max(salary) FROM emp WHERE id > 2",
            "SELECT count(*) FROM emp WHERE rowid IN (1, 3, 5) AND dept = 'ops'",
        ] { d.check(sql) }
        d.run(["UPDATE emp SET salary = salary * 1.1, dept = coalesce(dept, 'none') WHERE boss = 2",
               "INSERT INTO emp (name, dept, salary) SELECT name || '2', dept, salary / 2 FROM emp WHERE dept = 'eng'",
               "DELETE FROM emp WHERE salary < 55"])
        d.check("SELECT * FROM emp ORDER BY id")
        d.check("SELECT dept, count(*) FROM emp GROUP BY dept")
    }
}
