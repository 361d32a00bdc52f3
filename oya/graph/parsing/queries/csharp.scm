; C# (capture names: oya/graph/parsing/tags.py).
(namespace_declaration name: (_) @package)
(file_scoped_namespace_declaration name: (_) @package)
(class_declaration name: (_) @name) @class
(interface_declaration name: (_) @name) @class
(struct_declaration name: (_) @name) @class
(enum_declaration name: (_) @name) @class
(record_declaration name: (_) @name) @class
(method_declaration name: (_) @name) @method
(constructor_declaration name: (_) @name) @method
(invocation_expression function: (_) @call)
(object_creation_expression type: (_) @call)
(base_list (_) @inherit)
(using_directive (qualified_name) @import)
(using_directive (identifier) @import)
