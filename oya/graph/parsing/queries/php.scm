; PHP (capture names: oya/graph/parsing/tags.py).
(namespace_definition name: (_) @package)
(class_declaration name: (_) @name) @class
(interface_declaration name: (_) @name) @class
(trait_declaration name: (_) @name) @class
(enum_declaration name: (_) @name) @class
(function_definition name: (_) @name) @function
(method_declaration name: (_) @name) @method
(base_clause (_) @inherit)
(class_interface_clause (_) @inherit)
(declaration_list (use_declaration (_) @inherit))
(function_call_expression function: (_) @call)
(member_call_expression object: (_) @call.object name: (_) @call)
(nullsafe_member_call_expression object: (_) @call.object name: (_) @call)
(scoped_call_expression scope: (_) @call.object name: (_) @call)
(object_creation_expression [(name) (qualified_name)] @call)
(namespace_use_clause . [(name) (qualified_name)] @import alias: (_)? @import.alias)
