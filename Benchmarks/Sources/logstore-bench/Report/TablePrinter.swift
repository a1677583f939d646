/// A plain-text table with a header row, columns padded to their widest cell; text columns
/// left-aligned, the others right-aligned.
struct TablePrinter {
    var headers: [String]
    var leftAligned: Set<Int> = [0]
    var rows: [[String]] = []

    init(headers: [String], leftAligned: Set<Int> = [0]) {
        self.headers = headers
        self.leftAligned = leftAligned
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    func render() -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                let pad = String(repeating: " ", count: max(0, widths[i] - cell.count))
                return leftAligned.contains(i) ? cell + pad : pad + cell
            }.joined(separator: " | ")
        }
        var out = [line(headers), widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-")]
        out += rows.map(line)
        return out.joined(separator: "\n")
    }

    /// The same table in Markdown (for BENCHMARKS.md).
    func renderMarkdown() -> String {
        var out = ["| " + headers.joined(separator: " | ") + " |",
                   "|" + headers.indices.map { leftAligned.contains($0) ? " --- |" : " ---: |" }.joined()]
        out += rows.map { "| " + $0.joined(separator: " | ") + " |" }
        return out.joined(separator: "\n")
    }
}
