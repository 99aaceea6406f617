//! Form-mode schemas: the requested object schema and every primitive field form
//! of every version.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Number;

use crate::JsonObject;
use crate::common::RawObject;
use crate::open_struct::{open_enum, open_struct};

open_struct! {
    /// The schema of a form: a flat object of primitive fields.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct RequestedSchema {
        @tag "type" = "object";
        /// 2025-11-25+: the JSON Schema dialect.
        opt schema: String = "$schema",
        /// The fields, in the order sent.
        req properties: SchemaProperties = "properties",
        /// Names of the fields that must be filled.
        opt required: Vec<String> = "required",
    }
}

/// Form fields in the order the server sent them (the order a form shows them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SchemaProperties(pub Vec<(String, PrimitiveSchema)>);

impl SchemaProperties {
    /// The schema of field `name`.
    pub fn get(&self, name: &str) -> Option<&PrimitiveSchema> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }
}

impl Serialize for SchemaProperties {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for SchemaProperties {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct PropsVisitor;
        impl<'de> Visitor<'de> for PropsVisitor {
            type Value = SchemaProperties;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of field schemas")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<SchemaProperties, A::Error> {
                let mut fields: Vec<(String, PrimitiveSchema)> = Vec::new();
                let mut seen = std::collections::HashSet::new();
                while let Some((k, v)) = map.next_entry::<String, PrimitiveSchema>()? {
                    // Duplicate names: the last one wins, as with a JSON object. The
                    // set keeps this linear however many fields a server sends.
                    if !seen.insert(k.clone()) {
                        fields.retain(|(n, _)| *n != k);
                    }
                    fields.push((k, v));
                }
                Ok(SchemaProperties(fields))
            }
        }
        d.deserialize_map(PropsVisitor)
    }
}

/// The schema of one form field.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PrimitiveSchema {
    /// A free-text string.
    String(StringSchema),
    /// A number or integer.
    Number(NumberSchema),
    /// A boolean.
    Boolean(BooleanSchema),
    /// One of a list of values (2025-11-25+; `enum` without `enumNames`).
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// One of a list of values with display titles (`oneOf` of `const`/`title`).
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Several of a list of values (`type: array`, `items.enum`).
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Several of a list of values with titles (`type: array`, `items.anyOf`).
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// One of a list of values with `enumNames` (2025-06-18 form, legacy since).
    LegacyTitledEnum(LegacyTitledEnumSchema),
    /// A form this crate does not recognise, kept as sent.
    Unknown(JsonObject),
}

impl Serialize for PrimitiveSchema {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PrimitiveSchema::String(x) => x.serialize(s),
            PrimitiveSchema::Number(x) => x.serialize(s),
            PrimitiveSchema::Boolean(x) => x.serialize(s),
            PrimitiveSchema::UntitledSingleSelect(x) => x.serialize(s),
            PrimitiveSchema::TitledSingleSelect(x) => x.serialize(s),
            PrimitiveSchema::UntitledMultiSelect(x) => x.serialize(s),
            PrimitiveSchema::TitledMultiSelect(x) => x.serialize(s),
            PrimitiveSchema::LegacyTitledEnum(x) => x.serialize(s),
            PrimitiveSchema::Unknown(x) => x.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Cold path: buffer as raw text, classify by `type` and the enum members.
        let obj = RawObject::deserialize(d)?;
        let kind = obj.str_member("type");
        let result = match kind.as_deref() {
            Some("string") if obj.contains("enumNames") => {
                obj.decode().map(PrimitiveSchema::LegacyTitledEnum)
            }
            Some("string") if obj.contains("enum") => {
                obj.decode().map(PrimitiveSchema::UntitledSingleSelect)
            }
            Some("string") if obj.contains("oneOf") => {
                obj.decode().map(PrimitiveSchema::TitledSingleSelect)
            }
            Some("string") => obj.decode().map(PrimitiveSchema::String),
            Some("number" | "integer") => obj.decode().map(PrimitiveSchema::Number),
            Some("boolean") => obj.decode().map(PrimitiveSchema::Boolean),
            Some("array") if obj.member_has("items", "anyOf") => {
                obj.decode().map(PrimitiveSchema::TitledMultiSelect)
            }
            Some("array") if obj.member_has("items", "enum") => {
                obj.decode().map(PrimitiveSchema::UntitledMultiSelect)
            }
            _ => obj.decode().map(PrimitiveSchema::Unknown),
        };
        result.map_err(de::Error::custom)
    }
}

open_enum! {
    /// Formats of a string field.
    pub enum StringFormat {
        /// An email address.
        Email = "email",
        /// A URI.
        Uri = "uri",
        /// A date (`YYYY-MM-DD`).
        Date = "date",
        /// A date and time (RFC 3339).
        DateTime = "date-time",
    }
}

open_struct! {
    /// A string field.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct StringSchema {
        @tag "type" = "string";
        /// Label.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// Minimum length.
        opt min_length: u64 = "minLength",
        /// Maximum length.
        opt max_length: u64 = "maxLength",
        /// Format.
        opt format: StringFormat = "format",
        /// 2025-11-25+: default value.
        opt default: String = "default",
    }
}

open_enum! {
    /// The `type` of a number field.
    pub enum NumberType {
        /// Any number.
        Number = "number",
        /// An integer.
        Integer = "integer",
    }
}

open_struct! {
    /// A number field. Bounds and default are kept as sent.
    #[derive(Clone, Debug, PartialEq)]
    pub struct NumberSchema {
        /// `number` or `integer`.
        req kind: NumberType = "type",
        /// Label.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// Minimum.
        opt minimum: Number = "minimum",
        /// Maximum.
        opt maximum: Number = "maximum",
        /// 2025-11-25+: default value.
        opt default: Number = "default",
    }
}

open_struct! {
    /// A boolean field.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct BooleanSchema {
        @tag "type" = "boolean";
        /// Label.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// Default value.
        opt default: bool = "default",
    }
}

open_struct! {
    /// A single choice among plain values.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct UntitledSingleSelectEnumSchema {
        @tag "type" = "string";
        /// Label.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// The values.
        req values: Vec<String> = "enum",
        /// Default value.
        opt default: String = "default",
    }
}

open_struct! {
    /// A value with a display title.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct TitledOption {
        /// The value.
        req value: String = "const",
        /// Its display title.
        req title: String = "title",
    }
}

open_struct! {
    /// A single choice among titled values.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct TitledSingleSelectEnumSchema {
        @tag "type" = "string";
        /// Label.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// The options.
        req one_of: Vec<TitledOption> = "oneOf",
        /// Default value.
        opt default: String = "default",
    }
}

open_struct! {
    /// `items` of an untitled multi-select.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct UntitledEnumItems {
        @tag "type" = "string";
        /// The values.
        req values: Vec<String> = "enum",
    }
}

open_struct! {
    /// Several choices among plain values.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct UntitledMultiSelectEnumSchema {
        @tag "type" = "array";
        /// Label.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// Minimum number of choices.
        opt min_items: u64 = "minItems",
        /// Maximum number of choices.
        opt max_items: u64 = "maxItems",
        /// The values.
        req items: UntitledEnumItems = "items",
        /// Default choices.
        opt default: Vec<String> = "default",
    }
}

open_struct! {
    /// `items` of a titled multi-select.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct TitledEnumItems {
        /// The options.
        req any_of: Vec<TitledOption> = "anyOf",
    }
}

open_struct! {
    /// Several choices among titled values.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct TitledMultiSelectEnumSchema {
        @tag "type" = "array";
        /// Label.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// Minimum number of choices.
        opt min_items: u64 = "minItems",
        /// Maximum number of choices.
        opt max_items: u64 = "maxItems",
        /// The options.
        req items: TitledEnumItems = "items",
        /// Default choices.
        opt default: Vec<String> = "default",
    }
}

open_struct! {
    /// A single choice with `enumNames` (2025-06-18's `EnumSchema`).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct LegacyTitledEnumSchema {
        @tag "type" = "string";
        /// Label.
        opt title: String = "title",
        /// Help text.
        opt description: String = "description",
        /// The values.
        req values: Vec<String> = "enum",
        /// Display names, parallel to `enum`.
        opt enum_names: Vec<String> = "enumNames",
        /// 2025-11-25+: default value.
        opt default: String = "default",
    }
}
