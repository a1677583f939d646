/// A position in a config file: 1-based line and column (columns count Unicode scalars).
struct SourcePosition: Sendable, Equatable {
    var line: Int
    var column: Int
}

/// One attribute of an element, with where its name starts.
struct ConfigAttribute: Sendable, Equatable {
    var name: String
    var value: String
    var position: SourcePosition
}

/// An element of a config file, with its attributes and children in document order.
struct ConfigElement: Sendable, Equatable {
    var name: String
    var attributes: [ConfigAttribute]
    var children: [ConfigNode]
    var position: SourcePosition

    /// The value of the attribute `name`, or nil.
    func attribute(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    /// The child elements, without text.
    var elements: [ConfigElement] {
        children.compactMap { if case .element(let element) = $0 { return element } else { return nil } }
    }

    /// The concatenated text of the direct text children.
    var text: String {
        children.map { if case .text(let text, _) = $0 { return text } else { return "" } }.joined()
    }
}

/// A node of the tree: an element, or text (character data, CDATA and entities already decoded)
/// with the position where it starts.
enum ConfigNode: Sendable, Equatable {
    case element(ConfigElement)
    case text(String, SourcePosition)
}
