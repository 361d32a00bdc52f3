; Go (capture names: oya/graph/parsing/tags.py).
(package_clause (package_identifier) @package)
(function_declaration name: (identifier) @name) @function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      name: (identifier)? @self
      type: [
        (type_identifier) @receiver
        (pointer_type (type_identifier) @receiver)
        (generic_type type: (type_identifier) @receiver)
        (pointer_type (generic_type type: (type_identifier) @receiver))
      ]))
  name: (field_identifier) @name) @method
(type_spec name: (type_identifier) @name) @class
(method_elem name: (field_identifier) @name) @method
(field_declaration_list (field_declaration !name type: (_) @inherit))
(interface_type (type_elem (type_identifier) @inherit))
(call_expression function: (_) @call)
(import_spec name: (_)? @import.alias path: (_) @import)
