import Foundation

/// A horizontal bar chart of speed ratios (UnifiedStorage / a peer) as an SVG file, written by
/// the benches' `--svg DIR`. Bars grow from the 1x line on a logarithmic axis: right (green)
/// when UnifiedStorage is faster, left (orange) when the peer is. No dependency: plain SVG text.
public struct RatioChart {
    public var title: String
    /// The peer's name, for the axis legend.
    public var peer: String
    /// One bar per workload: its label and the ratio (> 1: UnifiedStorage faster). Ratios that
    /// are not positive finite numbers are drawn as "n/a".
    public var bars: [(label: String, ratio: Double)]

    public init(title: String, peer: String, bars: [(label: String, ratio: Double)]) {
        self.title = title
        self.peer = peer
        self.bars = bars
    }

    /// The SVG document.
    public func svg() -> String {
        let width = 860.0, labelWidth = 300.0, rightMargin = 70.0, rowHeight = 24.0, top = 56.0
        let plotLeft = labelWidth, plotWidth = width - labelWidth - rightMargin
        let valid = bars.map(\.ratio).filter { $0.isFinite && $0 > 0 }
        // Symmetric decades around 1x, at least 0.1x ... 10x.
        let decades = max(1, Int((valid.map { abs(log10($0)) }.max() ?? 1).rounded(.up)))
        func x(_ ratio: Double) -> Double {
            let clamped = min(max(log10(ratio), -Double(decades)), Double(decades))
            return plotLeft + (clamped + Double(decades)) / Double(2 * decades) * plotWidth
        }
        let height = top + Double(bars.count) * rowHeight + 40
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(width / 2))" y="22" text-anchor="middle" font-size="15" font-weight="bold">\(Self.escape(title))</text>

            """
        // Decade grid lines and labels.
        for decade in -decades...decades {
            let ratio = pow(10, Double(decade))
            let position = Self.format(x(ratio))
            let label = decade < 0 ? "\(Self.number(ratio))x" : "\(Int(ratio))x"
            out += "<line x1=\"\(position)\" y1=\"\(Int(top - 8))\" x2=\"\(position)\" y2=\"\(Self.format(top + Double(bars.count) * rowHeight))\" stroke=\"\(decade == 0 ? "#333" : "#ddd")\" stroke-width=\"\(decade == 0 ? 1.5 : 1)\"/>\n"
            out += "<text x=\"\(position)\" y=\"\(Int(top - 12))\" text-anchor=\"middle\" fill=\"#555\">\(label)</text>\n"
        }
        for (index, bar) in bars.enumerated() {
            let y = top + Double(index) * rowHeight
            out += "<text x=\"\(Int(labelWidth - 8))\" y=\"\(Self.format(y + rowHeight * 0.65))\" text-anchor=\"end\">\(Self.escape(bar.label))</text>\n"
            guard bar.ratio.isFinite, bar.ratio > 0 else {
                out += "<text x=\"\(Self.format(x(1) + 6))\" y=\"\(Self.format(y + rowHeight * 0.65))\" fill=\"#888\">n/a</text>\n"
                continue
            }
            let start = min(x(1), x(bar.ratio)), end = max(x(1), x(bar.ratio))
            let faster = bar.ratio >= 1
            out += "<rect x=\"\(Self.format(start))\" y=\"\(Self.format(y + 4))\" width=\"\(Self.format(max(end - start, 1)))\" height=\"\(Self.format(rowHeight - 8))\" fill=\"\(faster ? "#3a9d5d" : "#e08a2c")\"/>\n"
            let textX = faster ? end + 4 : start - 4
            out += "<text x=\"\(Self.format(textX))\" y=\"\(Self.format(y + rowHeight * 0.65))\" text-anchor=\"\(faster ? "start" : "end")\">\(Self.number(bar.ratio))x</text>\n"
        }
        let legendY = top + Double(bars.count) * rowHeight + 24
        out += "<text x=\"\(Self.format(x(1) - 8))\" y=\"\(Self.format(legendY))\" text-anchor=\"end\" fill=\"#e08a2c\">← \(Self.escape(peer)) faster</text>\n"
        out += "<text x=\"\(Self.format(x(1) + 8))\" y=\"\(Self.format(legendY))\" fill=\"#3a9d5d\">UnifiedStorage faster →</text>\n"
        out += "</svg>\n"
        return out
    }

    /// Writes `NAME.svg` into `directory` (created when missing); returns its URL.
    public func write(to directory: URL, name: String) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name + ".svg")
        try Data(svg().utf8).write(to: url, options: .atomic)
        return url
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Two decimals below 10 (0.31, 2.45), whole numbers from 10, two significant digits
    /// below 0.1 (0.042).
    private static func number(_ value: Double) -> String {
        value >= 10 ? String(format: "%.0f", value) : value >= 0.1 ? String(format: "%.2f", value) : String(format: "%.2g", value)
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
