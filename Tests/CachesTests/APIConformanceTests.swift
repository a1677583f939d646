import Foundation
import XCTest
import UnifiedStorage

/// Every declaration of API.swift's "module Caches" section, and PurgeablePath, referenced with
/// its exact labels and types through `import UnifiedStorage`: this file stops compiling if one
/// drifts.
final class CachesAPIConformanceTests: XCTestCase {
    func testDeclarationsMatchAPISwift() {
        let _: (Int, Int, TimeInterval) -> LRUMemoryCache<Data> = LRUMemoryCache<Data>.init(capacity:totalCostLimit:ageLimit:)
        let _: (LRUMemoryCache<Data>) -> Bool = { $0.handleMemoryWarning }
        let _: (LRUMemoryCache<Data>) -> () -> Void = LRUMemoryCache<Data>.didReceiveMemoryWarning
        let _: (LRUMemoryCache<Data>) -> (Data?, String) -> Void = LRUMemoryCache<Data>.setObject(_:forKey:)
        let _: (LRUMemoryCache<Data>) -> (Data?, String, Int) -> Void = LRUMemoryCache<Data>.setObject(_:forKey:cost:)
        let _: (LRUMemoryCache<Data>) -> (Data?, String, TimeInterval) -> Void = LRUMemoryCache<Data>.setObject(_:forKey:expire:)
        let _: (LRUMemoryCache<Data>) -> (String) -> Data? = LRUMemoryCache<Data>.object(forKey:)
        let _: (LRUMemoryCache<Data>) -> (String) -> Void = LRUMemoryCache<Data>.removeObject(forKey:)
        let _: (LRUMemoryCache<Data>) -> () -> Void = LRUMemoryCache<Data>.removeAllObjects
        let _: (LRUMemoryCache<Data>) -> ([String: Data]) -> Void = LRUMemoryCache<Data>.addObjects
        let _: (LRUMemoryCache<Data>) -> (String) throws -> Void = LRUMemoryCache<Data>.removeObjects(matchingRegex:)
        let _: (LRUMemoryCache<Data>) -> (String) -> Void = LRUMemoryCache<Data>.removeObjects(withPrefix:)
        let _: (LRUMemoryCache<Data>) -> (String) -> Void = LRUMemoryCache<Data>.removeObjects(withSuffix:)
        let _: (LRUMemoryCache<Data>) -> ([String]) -> Void = { cache in { cache.removeObjects(forKeys: $0) } }
        let _: (LRUMemoryCache<Data>) -> (Int, Bool) -> [Data] = LRUMemoryCache<Data>.peekObjects(_:fromHead:)
        let _: (LRUMemoryCache<Data>) -> (String) -> Bool = LRUMemoryCache<Data>.objectExists(forKey:)
        let _: (LRUMemoryCache<Data>) -> (Int) -> Void = LRUMemoryCache<Data>.resetCapacity

        let _: (String, Int, Bool, Bool, CustomStorage?) throws -> LRUDiskCache<Data> = LRUDiskCache<Data>.init(name:capacity:userDependent:crypted:in:)
        let _: (String, Int, Bool, Bool, CustomStorage?) throws -> LRUDiskCache<NSString> = LRUDiskCache<NSString>.init(name:capacity:userDependent:crypted:in:)
        let _: (LRUDiskCache<Data>) -> (Data?, String) -> Void = LRUDiskCache<Data>.setObject(_:forKey:)
        let _: (LRUDiskCache<Data>) -> (Data?, String, TimeInterval) -> Void = LRUDiskCache<Data>.setObject(_:forKey:expire:)
        let _: (LRUDiskCache<Data>) -> (String) -> Data? = LRUDiskCache<Data>.object(forKey:)
        let _: (LRUDiskCache<Data>) -> (String) -> Void = LRUDiskCache<Data>.removeObject(forKey:)
        let _: (LRUDiskCache<Data>) -> () -> Void = LRUDiskCache<Data>.removeAllObjects
        let _: (LRUDiskCache<Data>) -> ([String: Data]) -> Void = LRUDiskCache<Data>.addObjects
        let _: (LRUDiskCache<Data>) -> (String) -> Void = LRUDiskCache<Data>.removeObjects(like:)
        let _: (LRUDiskCache<Data>) -> (Set<String>) -> Void = { cache in { cache.removeObjects(forKeys: $0) } }

        let _: (FileArrayService) -> (Data, String) async -> Bool = FileArrayService.writeFile(_:name:)
        let _: (FileArrayService) -> (Data, String, (@Sendable (Bool) -> Void)?) -> Void = FileArrayService.writeFile(_:name:completion:)
        let _: (FileArrayService) -> (String) async -> Data? = FileArrayService.readFile(_:)
        let _: (FileArrayService) -> (String, @escaping @Sendable (Data?) -> Void) -> Void = FileArrayService.readFile(_:completion:)
        let _: (FileArrayService) -> (String) -> Data? = FileArrayService.readFileSync
        let _: (FileArrayService) -> (String) async -> [String: Data] = FileArrayService.readFiles(like:)
        let _: (FileArrayService) -> (String, @escaping @Sendable ([String: Data]) -> Void) -> Void = FileArrayService.readFiles(like:completion:)
        let _: (FileArrayService) -> (String, String) async -> Bool = FileArrayService.renameFile(_:to:)
        let _: (FileArrayService) -> (String, String, (@Sendable (Bool) -> Void)?) -> Void = FileArrayService.renameFile(_:to:completion:)
        let _: (FileArrayService) -> (String) -> Void = FileArrayService.removeFile
        let _: (FileArrayService) -> (String) -> Void = FileArrayService.removeFiles(like:)
        let _: (FileArrayService) -> () -> Void = FileArrayService.removeAllFiles
        let _: (FileArrayService) -> (String) -> Bool = FileArrayService.fileExists
        let _: (FileArrayService) -> () -> [String] = FileArrayService.allFileNames
        let _: (FileArrayService) -> () -> Int = FileArrayService.fileCount

        typealias Objects = ObjectArrayService<String>
        let _: (Objects) -> (String?, String) -> Void = Objects.setObject(_:forKey:)
        let _: (Objects) -> (String) -> String? = Objects.object(forKey:)
        let _: (Objects) -> (String, @escaping @Sendable (String?) -> Void) -> Void = Objects.object(forKey:completion:)
        let _: (Objects) -> (String) async -> [String: String] = Objects.objects(forKeyLike:)
        let _: (Objects) -> (String, @escaping @Sendable ([String: String]) -> Void) -> Void = Objects.objects(forKeyLike:completion:)
        let _: (Objects) -> (String) -> Void = Objects.removeObject(forKey:)
        let _: (Objects) -> (String) -> Void = Objects.removeObjects(forKeyLike:)
        let _: (Objects) -> () -> Void = Objects.removeAllObjects
        let _: (Objects) -> (String) -> Bool = Objects.objectExists(forKey:)
        let _: (Objects) -> () -> [String] = Objects.allKeys
        let _: (Objects) -> () -> Int = Objects.objectCount

        let _: (CustomStorage) -> (String, Bool, Int, Bool, DispatchQueue?) throws -> FileArrayService =
            CustomStorage.fileArrayService(name:userDependent:capacity:crypted:callbackQueue:)
        let _: (CustomStorage) -> (String, Bool, Int, Int, Bool, String.Type, DispatchQueue?) throws -> Objects =
            CustomStorage.objectArrayService(name:userDependent:capacity:cacheCapacity:crypted:of:callbackQueue:)

        let _: [CacheCleaner.Phase] = [.preCalculating, .cleaning, .postCalculating, .done]
        let _: [CacheCleaner.Task] = [.paths(path: "", entries: []), .handlers(className: "", selectors: [])]
        let _: (URL) throws -> [CacheCleaner.Task] = CacheCleaner.tasks(from:)
        let _: (String, @escaping @Sendable () throws -> Void) -> Void = CacheCleaner.register
        let _: ([CacheCleaner.Task], @escaping @Sendable (CacheCleaner.Phase, Double) -> Void) async -> Double = CacheCleaner.execute(tasks:progress:)
        let _: ([CacheCleaner.Task], @escaping @Sendable (CacheCleaner.Phase, Double) -> Void, @escaping @Sendable (Double) -> Void) -> Void =
            CacheCleaner.execute(tasks:progress:completion:)

        let _: [PurgeablePath.PurgeType] = [.manual, .threeDays, .oneWeek, .twoWeeks, .oneMonth]
        XCTAssertEqual([PurgeablePath.PurgeType.manual, .threeDays, .oneWeek, .twoWeeks, .oneMonth].map(\.rawValue), [0, 3, 7, 14, 30])
        let _: (String, PurgeablePath.PurgeType, Int) throws -> URL = PurgeablePath.path(_:type:sizeLimitMB:)
        let _: () throws -> Void = PurgeablePath.sweep
        let _: () throws -> Void = PurgeablePath.resetAll
    }
}
