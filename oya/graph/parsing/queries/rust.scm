; Rust (capture names: oya/graph/parsing/tags.py).
(struct_item name: (_) @name) @class
(enum_item name: (_) @name) @class
(union_item name: (_) @name) @class
(trait_item name: (_) @name) @class
(type_item name: (_) @name) @class
(function_item name: (_) @name) @function
(function_signature_item name: (_) @name) @function
(macro_definition name: (_) @name) @function
(impl_item
  type: [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (scoped_type_identifier name: (type_identifier) @name)
  ]) @scope
(impl_item trait: (_) @inherit)
(call_expression function: (_) @call)
(use_declaration argument: (_) @import)
(mod_item name: (identifier) @import.relative !body)
