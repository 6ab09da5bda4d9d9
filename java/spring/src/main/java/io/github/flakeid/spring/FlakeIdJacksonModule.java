package io.github.flakeid.spring;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.Version;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.databind.introspect.Annotated;
import com.fasterxml.jackson.databind.introspect.NopAnnotationIntrospector;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.StdScalarSerializer;
import io.github.flakeid.hibernate.FlakeId;
import java.io.IOException;

/**
 * Jackson: the properties marked {@link FlakeId @FlakeId} are written as JSON strings
 * ({@code "910499571847892992"}), since {@code JSON.parse} rounds a number above
 * 2^53, and read from a string of digits or an integer. An explicit
 * {@code @JsonSerialize}/{@code @JsonDeserialize} on the property wins. The starter
 * registers it with Spring Boot's {@code ObjectMapper} unless {@code
 * flakeid.json.ids-as-strings=false}; elsewhere, {@code mapper.registerModule(new
 * FlakeIdJacksonModule())}.
 */
public class FlakeIdJacksonModule extends SimpleModule {
  private static final long serialVersionUID = 1L;

  public FlakeIdJacksonModule() {
    super("flakeid", Version.unknownVersion());
  }

  @Override
  public void setupModule(SetupContext context) {
    super.setupModule(context);
    context.appendAnnotationIntrospector(new Introspector());
  }

  /** Finds {@code @FlakeId} on a property (its field, getter or setter). */
  static final class Introspector extends NopAnnotationIntrospector {
    private static final long serialVersionUID = 1L;

    @Override
    public Object findSerializer(Annotated a) {
      return a.hasAnnotation(FlakeId.class) ? IdSerializer.class : null;
    }

    @Override
    public Object findDeserializer(Annotated a) {
      return a.hasAnnotation(FlakeId.class) ? IdDeserializer.class : null;
    }
  }

  /** An ID as its decimal string. */
  public static final class IdSerializer extends StdScalarSerializer<Number> {
    private static final long serialVersionUID = 1L;

    public IdSerializer() {
      super(Number.class);
    }

    @Override
    public void serialize(Number value, JsonGenerator gen, SerializerProvider provider) throws IOException {
      gen.writeString(Long.toString(value.longValue()));
    }
  }

  /** An ID from a string of digits or a JSON integer (never a float: it lost digits). */
  public static final class IdDeserializer extends StdScalarDeserializer<Long> {
    private static final long serialVersionUID = 1L;

    public IdDeserializer() {
      super(Long.class);
    }

    @Override
    public Long deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      if (p.currentToken() == JsonToken.VALUE_NUMBER_INT) {
        return p.getLongValue();
      }
      if (p.currentToken() == JsonToken.VALUE_STRING) {
        String text = p.getText().trim();
        if (!text.isEmpty() && text.length() <= 19 && text.chars().allMatch(c -> c >= '0' && c <= '9')) {
          try {
            return Long.parseLong(text);
          } catch (NumberFormatException e) {
            // past Long.MAX_VALUE: below
          }
        }
        return (Long) ctxt.handleWeirdStringValue(Long.class, text, "not an ID (a whole number in 0..=%d)", Long.MAX_VALUE);
      }
      return (Long) ctxt.handleUnexpectedToken(Long.class, p);
    }
  }
}
