import Foundation
import UnifiedStorage
import XCTest

/// API.swift's XML DAO declarations (module DAO: DAOResult, DAOFlag, DAOEvent, DAOTypeRegistry,
/// DAOMethod, DAOProxy; module Preferences: the `dao(...)` factories), referenced with their
/// exact labels and types through `import UnifiedStorage`: this file stops compiling if one drifts.
final class XMLDAOAPIConformanceTests: XCTestCase {
    struct Row: Decodable { var id: Int }

    func testDeclarationsMatchAPISwift() {
        let result = DAOResult(succeeded: true, lastInsertRowId: 1, changedRowCount: 2, flags: [.none], foreachFailedObjects: [])
        let _: Bool = result.succeeded
        let _: Int64 = result.lastInsertRowId
        let _: Int = result.changedRowCount
        let _: [DAOFlag] = result.flags
        let _: [Int] = result.foreachFailedObjects
        let _: [DAOFlag] = [.none, .tryBlockExecuted, .exceptBlockExecuted]
        let _: [DAOEvent] = [.shouldUpgrade(table: "", from: "", to: ""), .upgradeFailed(table: "", message: ""), .tableCreated(""), .tableDeleted("")]
        DAOTypeRegistry.register(Row.self, as: "APIConformanceRow")
        let _: (DAOMethod) -> (KeyValuePairs<String, Any?>) throws -> Any? = DAOMethod.dynamicallyCall(withKeywordArguments:)

        let _: (DAOProxy, String) -> DAOMethod = { $0[dynamicMember: $1] }
        let _: (DAOProxy) -> (String, [String: Any?]) throws -> Any? = DAOProxy.call(_:_:)
        let _: (DAOProxy) -> (String, [Any?]) throws -> Any? = DAOProxy.call(_:positional:)
        let _: (DAOProxy) -> (String, [String: Any?], Row.Type) throws -> Row? = DAOProxy.call(_:_:as:)
        let _: (DAOProxy) -> String = { $0.tableName }
        let _: (DAOProxy) -> Void = { $0.tableName = "t" }
        let _: (DAOProxy) -> (String) -> DAOProxy = DAOProxy.forTable
        let _: (DAOProxy) -> (String, [Any?]) throws -> DAOResult = DAOProxy.executeUpdate(sql:arguments:)
        let _: (DAOProxy) -> (String, [Any?]) throws -> [[String: DAOValue]] = DAOProxy.executeQuery(sql:arguments:)
        let _: (DAOProxy) -> Int64 = { $0.lastInsertRowId }
        let _: (DAOProxy) -> Int = { $0.lastChangedRowCount }
        let _: (DAOProxy) -> [String] = { $0.allMethods }
        let _: (DAOProxy) -> (String) throws -> Bool = DAOProxy.tableExists
        let _: (DAOProxy) -> () throws -> String = DAOProxy.schema
        let _: (DAOProxy) -> () throws -> Void = DAOProxy.deleteTable
        let _: (DAOProxy) -> (String) throws -> Void = DAOProxy.deleteTables(matchingRegex:)
        let _: (DAOProxy) throws -> Int = { try $0.transaction { _ in 1 } }
        let _: (DAOProxy) -> () throws -> Void = DAOProxy.beginTransaction
        let _: (DAOProxy) -> () throws -> Void = DAOProxy.commit
        let _: (DAOProxy) -> () throws -> Void = DAOProxy.rollback
        let _: (DAOProxy) -> DataCrypt? = { $0.encryptCrypt }
        let _: (DAOProxy) -> DataCrypt? = { $0.decryptCrypt }
        let _: (DAOProxy) -> Void = { $0.encryptCrypt = nil; $0.decryptCrypt = nil }
        let _: (DAOProxy) -> (@Sendable (DAOEvent) -> Bool)? = { $0.eventHandler }
        let _: (DAOProxy) -> Void = { $0.eventHandler = { _ in true } }

        let _: (DataCenter) -> (URL, Bool) throws -> DAOProxy = DataCenter.dao(configPath:userDependent:)
        let _: (DataCenter) -> (URL, URL) throws -> DAOProxy = DataCenter.dao(configPath:databasePath:)
        let _: (CustomStorage) -> (URL, Bool) throws -> DAOProxy = CustomStorage.dao(configPath:userDependent:)
        XCTAssertEqual(result.changedRowCount, 2)
    }
}
