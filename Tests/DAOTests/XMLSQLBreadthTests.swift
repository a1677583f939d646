@testable import DAO
import Foundation
import XCTest

/// The XML DAO configs use the whole SQL subset: joins, subqueries (IN, EXISTS, scalar),
/// views, triggers, WITH and compound selects, through the proxy's methods, on SQLite (the
/// oracle) and on `SQLDatabase`, whose answers must be the same. A method's text is split into
/// statements at `;`, except inside a trigger's BEGIN ... END.
final class XMLSQLBreadthTests: XMLEngineTestCase {
    static let shop = """
    <module name="Shop" initializer="createOrders" tableName="orders" version="1.0">
      <update id="createOrders">
        create table if not exists ${T} (id integer primary key, customer_id integer, cents integer)
      </update>
      <update id="createCustomers">create table if not exists customers (id integer primary key, region integer, name text)</update>
      <update id="createIndex">create index if not exists orders_customer on ${T} (customer_id)</update>
      <update id="createAudit">create table if not exists audit (order_id integer, cents integer)</update>
      <update id="createView">
        create view if not exists big_orders as
        select o.id, o.cents, c.name from ${T} o join customers c on c.id = o.customer_id where o.cents >= 100
      </update>
      <update id="createTrigger">
        create trigger if not exists orders_audit after insert on ${T} when new.cents >= 100
        begin
          insert into audit values (new.id, new.cents);
          update audit set cents = cents + 0 where order_id = new.id and ';' != 'end;';
        end
      </update>
      <update id="twoStatements">insert into audit values (0, 0); delete from audit where order_id = 0</update>
      <insert id="addCustomer" arguments="id, region, name">insert into customers values (#{id}, #{region}, #{name})</insert>
      <insert id="addOrder" arguments="id, customer, cents">
        insert into ${T} (id, customer_id, cents) values (#{id}, #{customer}, #{cents})
      </insert>
      <select id="regionTotals" result="[{}]">
        select c.region as region, count(*) as n, sum(o.cents) as total
        from ${T} o join customers c on c.id = o.customer_id group by c.region order by c.region
      </select>
      <select id="ordersOfRegion" arguments="region" result="[int]">
        select id from ${T} where customer_id in (select id from customers where region = #{region}) order by id
      </select>
      <select id="customersWithoutOrders" result="[string]">
        select name from customers c where not exists (select 1 from ${T} o where o.customer_id = c.id) order by name
      </select>
      <select id="bigOrders" result="[{}]">select * from big_orders order by id</select>
      <select id="auditRows" result="[{}]">select * from audit order by order_id</select>
      <select id="ranked" result="[{}]">
        with totals(customer, total) as (select customer_id, sum(cents) from ${T} group by customer_id)
        select coalesce(c.name, 'unknown') as name, t.total as total from totals t left join customers c on c.id = t.customer
        union all select 'none', 0
        order by 2 desc, 1
      </select>
      <select id="topCustomer" result="string">
        select name from customers where id = (select customer_id from ${T} order by cents desc, id limit 1)
      </select>
    </module>
    """

    func testJoinsSubqueriesViewsTriggersAndWithInAConfig() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.shop, runner: runner)
            for method in ["createCustomers", "createIndex", "createAudit", "createView", "createTrigger", "twoStatements"] {
                _ = try proxy.call(method)
            }
            for (id, region, name) in [(1, 10, "ann"), (2, 10, "bob"), (3, 20, "cid"), (4, 30, "dee")] {
                _ = try proxy.call("addCustomer", ["id": id, "region": region, "name": name])
            }
            for (id, customer, cents) in [(1, 1, 50), (2, 1, 150), (3, 2, 100), (4, 3, 20), (5, 9, 300), (6, 3, 99)] {
                _ = try proxy.call("addOrder", ["id": id, "customer": customer, "cents": cents])
            }
            return [describe(try proxy.call("regionTotals")),
                    describe(try proxy.call("ordersOfRegion", ["region": 10])),
                    describe(try proxy.call("customersWithoutOrders")),
                    describe(try proxy.call("bigOrders")),
                    describe(try proxy.call("auditRows")),
                    describe(try proxy.call("ranked")),
                    describe(try proxy.call("topCustomer"))].joined(separator: "\n")
        }
    }
}
