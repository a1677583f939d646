import Foundation

// The timed loops, kept out of line so a profiler can single them out, and generic over the
// engine so each is specialized for it (no dynamic dispatch in the loop).

/// Puts the keys of `order` with values of `generation`, timing each put when `samples` is
/// given, until all are done or the clock passes `deadline` (checked every 64 puts). Returns
/// the elapsed seconds and how many were done.
@inline(never)
func putAll<E: KVEngine>(_ engine: E, order: [UInt32], values: inout ValueSource, generation: UInt8,
                         samples: LatencySamples?, deadline: UInt64 = .max) throws -> (seconds: Double, done: Int) {
    var key = KeyBuffer()
    let start = MonotonicClock.now()
    var last = start
    var done = 0
    for next in order {
        let i = Int(next)
        key.set(i)
        values.make(index: i, generation: generation)
        try engine.put(key.bytes, values.bytes)
        if let samples {
            let now = MonotonicClock.now()
            samples.record(now &- last)
            last = now
        }
        done &+= 1
        if done & 63 == 0, MonotonicClock.now() > deadline { break }
    }
    return (MonotonicClock.seconds(from: start, to: MonotonicClock.now()), done)
}

/// Gets the keys of `order`, timing each get when `samples` is given, and checks each value
/// holds `generation` (any, when nil). Returns the elapsed seconds, the number of missing or
/// wrong values, the first of them, and how many gets were done (all, unless the clock passed
/// `deadline`).
@inline(never)
func getAll<E: KVEngine>(_ engine: E, order: [UInt32], values: ValueSource, generation: UInt8?,
                         samples: LatencySamples?, deadline: UInt64 = .max) throws -> (seconds: Double, mismatches: Int, first: Int, done: Int) {
    var key = KeyBuffer()
    var mismatches = 0
    var firstMismatch = -1
    let start = MonotonicClock.now()
    var last = start
    var done = 0
    for next in order {
        if done & 63 == 63, MonotonicClock.now() > deadline { break }
        let i = Int(next)
        key.set(i)
        let value = try engine.get(key.bytes)
        done &+= 1
        if let samples {
            let now = MonotonicClock.now()
            samples.record(now &- last)
            last = now
        }
        if let value, values.check(value, index: i, generation: generation) { continue }
        mismatches += 1
        if firstMismatch < 0 { firstMismatch = i }
    }
    return (MonotonicClock.seconds(from: start, to: MonotonicClock.now()), mismatches, firstMismatch, done)
}

/// Deletes the keys of `order`, timing each delete when `samples` is given, until all are done
/// or the clock passes `deadline`. Returns the elapsed seconds and how many were done.
@inline(never)
func deleteAll<E: KVEngine>(_ engine: E, order: [UInt32], samples: LatencySamples?,
                            deadline: UInt64 = .max) throws -> (seconds: Double, done: Int) {
    var key = KeyBuffer()
    let start = MonotonicClock.now()
    var last = start
    var done = 0
    for next in order {
        if done & 63 == 63, MonotonicClock.now() > deadline { break }
        key.set(Int(next))
        try engine.delete(key.bytes)
        done &+= 1
        if let samples {
            let now = MonotonicClock.now()
            samples.record(now &- last)
            last = now
        }
    }
    return (MonotonicClock.seconds(from: start, to: MonotonicClock.now()), done)
}

/// Writes the keys of `order` with values of `generation` through the engine's batch API,
/// `batchSize` at a time, in key order (loading outside the timed parts: sorted, a B-tree's
/// batch touches a few pages instead of one per key). Returns the elapsed seconds.
func loadBatched<E: KVEngine>(_ engine: E, order unsorted: ArraySlice<UInt32>, values: inout ValueSource, generation: UInt8,
                              batchSize: Int = 1000) throws -> Double {
    var key = KeyBuffer()
    let start = MonotonicClock.now()
    let order = unsorted.sorted()
    var keys: [[UInt8]] = []
    var batchValues: [[UInt8]] = []
    keys.reserveCapacity(batchSize)
    batchValues.reserveCapacity(batchSize)
    for next in order {
        let i = Int(next)
        key.set(i)
        values.make(index: i, generation: generation)
        keys.append(key.bytes)
        batchValues.append(values.bytes)
        if keys.count == batchSize {
            try engine.putBatch(keys, batchValues)
            keys.removeAll(keepingCapacity: true)
            batchValues.removeAll(keepingCapacity: true)
        }
    }
    if !keys.isEmpty { try engine.putBatch(keys, batchValues) }
    return MonotonicClock.seconds(from: start, to: MonotonicClock.now())
}

/// Reads key `index` once and checks it holds the value of `generation`.
func getAndCheck<E: KVEngine>(_ engine: E, index: Int, values: ValueSource, generation: UInt8?) throws {
    var key = KeyBuffer()
    key.set(index)
    guard let value = try engine.get(key.bytes) else {
        throw BenchError.verification("key \(index) not found")
    }
    guard values.check(value, index: index, generation: generation) else {
        throw BenchError.verification("key \(index) has a wrong value (\(value.count) bytes)")
    }
}

/// Runs `body(thread)` on `count` new threads that start together; returns the seconds from
/// their common start until the last one ended, and rethrows the first error.
func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws -> Double {
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let errors = Slots<Error?>(count: count, initial: nil)
    for index in 0..<count {
        done.enter()
        let thread = Thread {
            ready.signal()
            go.wait()
            do { try body(index) } catch { errors[index] = error }
            done.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<count { ready.wait() }
    let start = MonotonicClock.now()
    for _ in 0..<count { go.signal() }
    done.wait()
    let seconds = MonotonicClock.seconds(from: start, to: MonotonicClock.now())
    if let error = errors.values.compactMap({ $0 }).first { throw error }
    return seconds
}

/// Hands a non-Sendable value to other threads; the caller keeps the accesses apart.
final class UncheckedBox<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

/// One slot per thread, each written by its own thread only, read after they have all ended.
final class Slots<T>: @unchecked Sendable {
    private let buffer: UnsafeMutableBufferPointer<T>

    init(count: Int, initial: T) {
        buffer = .allocate(capacity: count)
        buffer.initialize(repeating: initial)
    }

    deinit {
        buffer.baseAddress!.deinitialize(count: buffer.count)
        buffer.deallocate()
    }

    subscript(index: Int) -> T {
        get { buffer[index] }
        set { buffer[index] = newValue }
    }

    var values: [T] { Array(buffer) }
}
