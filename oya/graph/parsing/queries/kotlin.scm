; Kotlin (capture names: oya/graph/parsing/tags.py).
(package_header (qualified_identifier) @package)
(class_declaration name: (_) @name) @class
(object_declaration name: (_) @name) @class
(function_declaration name: (_) @name) @function
(delegation_specifier (user_type) @inherit)
(delegation_specifier (constructor_invocation (user_type) @inherit))
(call_expression . [(identifier) (navigation_expression)] @call)
(import (qualified_identifier) @import (identifier)? @import.alias)
