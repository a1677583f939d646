import BenchSupport
/// JSON-like values for the compression workloads: user records of the kind an app keeps
/// (profile, address, preferences, devices, a free-text bio), 0.6-1.6 KiB each, drawn from
/// small vocabularies with a seeded generator. Every document starts with
/// `{"id":"00000000","rev":0,` so a value can be stamped with its key and generation in place.
enum JSONDocuments {
    static let count = 512
    static let prefix = #"{"id":""#
    static let idDigits = 8
    static let idOffset = prefix.utf8.count
    static let revOffset = idOffset + idDigits + #"","rev":"#.utf8.count

    private static let firstNames = ["Alice", "Bruno", "Chloé", "Dmitri", "Emma", "Farid", "Grace", "Hiro", "Inès", "Jonas",
                                     "Kenji", "Léa", "Marta", "Noah", "Olga", "Pablo", "Quentin", "Rosa", "Sami", "Tess"]
    private static let lastNames = ["Moreau", "Schmidt", "Tanaka", "Rossi", "García", "Novak", "Dubois", "Kowalski", "Silva",
                                    "Andersson", "Okafor", "Haddad", "Nguyen", "Petrov", "Müller", "Costa"]
    private static let cities = [("Lyon", "69002", "FR"), ("Berlin", "10115", "DE"), ("Osaka", "530-0001", "JP"),
                                 ("Milano", "20121", "IT"), ("Madrid", "28013", "ES"), ("Praha", "110 00", "CZ"),
                                 ("Lisboa", "1100-148", "PT"), ("Toronto", "M5H 2N2", "CA"), ("Austin", "78701", "US")]
    private static let streets = ["Rue de la Paix", "Hauptstraße", "Sakura-dori", "Via Roma", "Calle Mayor", "Národní",
                                  "Avenida da Liberdade", "King Street West", "Congress Avenue"]
    private static let tags = ["swift", "storage", "beta", "premium", "trial", "ios", "android", "web", "newsletter",
                               "early-adopter", "family", "business", "student", "churn-risk"]
    private static let models = ["iPhone15,3", "iPhone14,2", "iPad13,4", "Pixel 8", "SM-S911B", "MacBookPro18,1"]
    private static let words = ["storage", "engine", "record", "segment", "coffee", "mountain", "weekend", "project",
                                "music", "garden", "travel", "photography", "reading", "cycling", "the", "and", "with",
                                "loves", "builds", "small", "fast", "apps", "for", "people", "who", "care", "about",
                                "privacy", "design", "details", "open", "source", "since", "years", "team", "city"]

    static func make(count: Int, seed: UInt64) -> [[UInt8]] {
        var rng = SplitMix64(seed: seed ^ 0x15_0D0C)
        return (0..<count).map { _ in Array(document(&rng).utf8) }
    }

    private static func pick<T>(_ list: [T], _ rng: inout SplitMix64) -> T { list[Int(rng.next() % UInt64(list.count))] }

    private static func number(_ range: Range<Int>, _ rng: inout SplitMix64) -> Int {
        range.lowerBound + Int(rng.next() % UInt64(range.count))
    }

    private static func date(_ rng: inout SplitMix64) -> String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "20\(number(18..<25, &rng))-\(two(number(1..<13, &rng)))-\(two(number(1..<29, &rng)))T" +
            "\(two(number(0..<24, &rng))):\(two(number(0..<60, &rng))):\(two(number(0..<60, &rng)))Z"
    }

    private static func document(_ rng: inout SplitMix64) -> String {
        let first = pick(firstNames, &rng)
        let last = pick(lastNames, &rng)
        let (city, zip, country) = pick(cities, &rng)
        let tagList = (0..<number(1..<5, &rng)).map { _ in "\"\(pick(tags, &rng))\"" }.joined(separator: ",")
        let devices = (0..<number(1..<5, &rng)).map { _ in
            "{\"model\":\"\(pick(models, &rng))\",\"os\":\"\(number(14..<18, &rng)).\(number(0..<7, &rng)).\(number(0..<3, &rng))\"," +
                "\"push_token\":\"\(String(rng.next(), radix: 16))\(String(rng.next(), radix: 16))\",\"last_seen\":\"\(date(&rng))\"}"
        }.joined(separator: ",")
        let bio = (0..<number(10..<60, &rng)).map { _ in pick(words, &rng) }.joined(separator: " ")
        let email = "\(first.lowercased()).\(last.lowercased())\(number(1..<100, &rng))@example.com"
        return prefix + String(repeating: "0", count: idDigits) + #"","rev":0,"# +
            "\"type\":\"user\",\"name\":\"\(first) \(last)\",\"email\":\"\(email)\",\"created_at\":\"\(date(&rng))\"," +
            "\"active\":\(rng.next() % 4 != 0),\"score\":\(number(0..<10_000, &rng)).\(number(10..<100, &rng)),\"tags\":[\(tagList)]," +
            "\"address\":{\"street\":\"\(number(1..<200, &rng)) \(pick(streets, &rng))\",\"city\":\"\(city)\",\"zip\":\"\(zip)\",\"country\":\"\(country)\"}," +
            "\"preferences\":{\"theme\":\"\(rng.next() % 2 == 0 ? "dark" : "light")\",\"language\":\"\(country.lowercased())\"," +
            "\"notifications\":{\"email\":\(rng.next() % 2 == 0),\"push\":\(rng.next() % 2 == 0),\"sms\":false}}," +
            "\"devices\":[\(devices)],\"bio\":\"\(bio)\"}"
    }
}
