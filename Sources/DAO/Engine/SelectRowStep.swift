/// What a single-core SELECT does with each row its scan visits: the residual WHERE, then the
/// result columns, DISTINCT, the sort keys, the OFFSET and LIMIT, and the sink. Made once per
/// run of the statement by `SQLDatabase.runSelect`.
///
/// A class with constant fields, so that the scan's row closure captures one reference. As
/// local functions, these steps captured some fifteen values; a closure called from a scan
/// loop the optimizer specialized retained and released each of them around every row, and
/// those atomic operations were about half of an indexed range's time under `perf`. Used by
/// one statement on one thread.
final class SelectRowStep {
    let compiled: CompiledSelect
    let context: RowContext
    let run: SelectRun
    let sink: RowSink?
    /// The filter's column-constant comparisons with their constants evaluated once.
    let fastFilter: RowFilter?
    /// WHERE without the terms the access path enforces.
    let rowFilter: Expr?
    // Few references: each is retained when the step is made and released after, and a
    // primary-key select makes a step for its one row. The result columns and the ORDER BY
    // terms are read through `compiled`.
    @inline(__always) private var outputs: [Expr] { compiled.outputs }
    @inline(__always) private var orderBy: [(expr: Expr, descending: Bool, output: Int?)] { compiled.orderBy }
    /// Rows come in the final order (the path gives the ORDER BY, or there is none).
    let ordered: Bool
    let distinct: Bool
    /// Result columns are evaluated only for the rows returned (see `runSelect`).
    let deferOutputs: Bool
    /// Rows go to the sink as they are made.
    let streaming: Bool
    let offset: Int64
    /// The LIMIT, nil when there is none.
    let wanted: Int64?
    /// The rows after which an ordered scan can stop (OFFSET + LIMIT).
    let earlyStop: Int64?
    /// The row slot of each result column (-1: the rowid) when every one is a column
    /// (`CompiledSelect.outputSlots`), else empty and `hasOutputSlots` false. Not an optional:
    /// binding one copied the array, a retain and release per row.
    let outputSlots: [Int]
    let hasOutputSlots: Bool
    let outputIsWholeRow: Bool
    /// The checkpoint blocks the tables are served from, read once: a read of the database's
    /// variable retained and released them for every row.
    let servedBlocks: CheckpointBlocks?

    init(database: SQLDatabase, compiled: CompiledSelect, context: RowContext, run: SelectRun, sink: RowSink?,
         fastFilter: RowFilter?, rowFilter: Expr?, ordered: Bool, distinct: Bool, deferOutputs: Bool,
         streaming: Bool, offset: Int64, wanted: Int64?, earlyStop: Int64?) {
        self.compiled = compiled
        self.context = context
        self.run = run
        self.sink = sink
        self.fastFilter = fastFilter
        self.rowFilter = rowFilter
        self.ordered = ordered
        self.distinct = distinct
        self.deferOutputs = deferOutputs
        self.streaming = streaming
        self.offset = offset
        self.wanted = wanted
        self.earlyStop = earlyStop
        let slots = compiled.outputSlots
        outputSlots = slots ?? []
        hasOutputSlots = slots != nil
        outputIsWholeRow = compiled.outputIsWholeRow
        servedBlocks = database.servedBlocks
    }

    /// Whether the current row passes the residual WHERE.
    @inline(__always)
    func passes() throws -> Bool {
        if let fastFilter { return try fastFilter.matches(context) }
        guard let rowFilter else { return true }
        return try Evaluator.keeps(rowFilter, context)
    }

    /// A scanned row: filtered, then emitted. False when the scan can stop.
    func visit() throws -> Bool {
        if try !passes() { return true }
        return try emit()
    }

    /// The current row's result columns.
    func evaluateOutputs() throws -> [SQLValue] {
        var output = [SQLValue]()
        output.reserveCapacity(outputs.count)
        for expr in outputs { output.append(try Evaluator.evaluate(expr, context)) }
        return output
    }

    /// Keeps a result row in `run.rows`, or hands it to the sink when streaming.
    func keep(_ output: [SQLValue]) throws {
        run.produced += 1
        guard streaming else { run.rows.append(output); return }
        // A damaged checkpoint block found during this query: no row after that point goes
        // out (the statement runs again on rebuilt tables; `RowSink`).
        if servedBlocks?.isDamaged == true { throw SQLDatabase.IndexDamage() }
        // Called through the optional: binding it (`guard let sink`) retained and released
        // the sink for every row. Streaming implies a sink.
        try sink?.deliver(output)
    }

    /// The result columns of the current row, kept; when streaming, evaluated into
    /// `run.outputBuffer` (reused from row to row) and handed to the sink.
    func keepOutputs() throws {
        guard streaming else { try keep(try evaluateOutputs()); return }
        // The row as loaded is the result row: the sink takes it as it is (a body that keeps
        // it holds a copy; the next row is then written into a new buffer).
        if outputIsWholeRow, context.row.count == outputs.count {
            // Moved out of the context for the call, as the output buffer below is.
            var row: [SQLValue] = []
            swap(&row, &context.row)
            defer { swap(&row, &context.row) }
            try keep(row)
            return
        }
        // The buffer is taken out of `run` for the row (a swap moves it without reference
        // counting; passing `run.outputBuffer` retained and released it), sized once for the
        // columns, then overwritten in place (emptying and appending went through the generic
        // replaceSubrange and a capacity check per value).
        var buffer: [SQLValue] = []
        swap(&buffer, &run.outputBuffer)
        defer { swap(&buffer, &run.outputBuffer) }
        if buffer.count != outputs.count { buffer = .filled(.null, count: outputs.count) }
        try buffer.withUnsafeMutableBufferPointer { buffer in
            if hasOutputSlots {
                for (i, slot) in outputSlots.enumerated() { buffer[i] = slot < 0 ? .integer(context.rowid) : context.row[slot] }
            } else {
                for (i, expr) in outputs.enumerated() { buffer[i] = try Evaluator.evaluate(expr, context) }
            }
        }
        try keep(buffer)
    }

    /// Emits the current row (a group's row for an aggregate): skips it for the OFFSET, keeps
    /// it, or sets it aside for the sort. False when the LIMIT is reached.
    func emit() throws -> Bool {
        if deferOutputs {
            if ordered {
                // Rows come in their final order: skip the OFFSET, stop after the LIMIT.
                if run.skipped < offset { run.skipped += 1; return true }
                try keepOutputs()
                if let wanted, run.produced >= wanted { return false }
                return true
            }
            var key = [SQLValue]()
            for term in orderBy { key.append(try Evaluator.evaluate(term.expr, context)) }
            run.sortKeys.append(key)
            run.deferred.append(LimitWindow.DeferredRow(context))
            return true
        }
        let output = try evaluateOutputs()
        if distinct, !run.seen.insert(ValueKey(values: compiled.hasFoldedOutputs ? compiled.foldedOutputs(output) : output)).inserted {
            return true
        }
        if !ordered {
            var key = [SQLValue]()
            for term in orderBy {
                if let position = term.output { key.append(output[position]) } else { key.append(try Evaluator.evaluate(term.expr, context)) }
            }
            run.sortKeys.append(key)
        }
        try keep(output)
        if let earlyStop, run.produced >= earlyStop { return false }
        return true
    }
}
