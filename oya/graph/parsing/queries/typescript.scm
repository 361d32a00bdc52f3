; TypeScript and TSX (with ecma.scm).
(abstract_class_declaration name: (_) @name) @class
(interface_declaration name: (_) @name) @class
(type_alias_declaration name: (_) @name) @class
(enum_declaration name: (_) @name) @class
(function_signature name: (_) @name) @function
(method_signature name: (_) @name) @method
(abstract_method_signature name: (_) @name) @method
(class_heritage (extends_clause value: (_) @inherit))
(class_heritage (implements_clause (_) @inherit))
(extends_type_clause type: (_) @inherit)
