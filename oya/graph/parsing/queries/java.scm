; Java (capture names: oya/graph/parsing/tags.py).
(package_declaration (_) @package)
(class_declaration name: (_) @name) @class
(interface_declaration name: (_) @name) @class
(enum_declaration name: (_) @name) @class
(record_declaration name: (_) @name) @class
(annotation_type_declaration name: (_) @name) @class
(method_declaration name: (_) @name) @method
(constructor_declaration name: (_) @name) @method
(method_invocation object: (_)? @call.object name: (_) @call)
(object_creation_expression type: (_) @call)
(superclass (_) @inherit)
(super_interfaces (type_list (_) @inherit))
(extends_interfaces (type_list (_) @inherit))
(import_declaration (scoped_identifier) @import)
