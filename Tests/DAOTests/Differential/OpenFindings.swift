/// Engine disagreements found by the differential tests and not fixed yet (numbered as in
/// /work/dao-findings.md, "dao-typed" entries). While a finding is listed here, its regression
/// test (DifferentialRegressionTests) is skipped and the generator avoids its construct, so the
/// suite stays green; remove the entry once the engine is fixed.
enum OpenFindings {
    static let open: Set<String> = []

    /// Whether the generator must avoid the construct of `finding`.
    static func avoid(_ finding: String) -> Bool { open.contains(finding) }
}
