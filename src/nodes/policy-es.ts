/**
 * The answerer's policy rules in Latin American Spanish (es-419; src/nodes/policy.ts). Patterns are data, over normalised text.
 */
import { structuralInjection, type PolicyRule } from "./policy-shapes.js";

// Shared fragments (normalised text: lowercase, no accents).
const ES_THIRD_PARTY =
  /\b(su (cuenta|tarjeta|saldo|clabe|numero|telefono|celular|direccion|nombre|correo)|de (el|ella|ellos|ellas)|(de|a|con) (mi|su|un|una) (ex|exesposo|exesposa|ex esposo|ex esposa|esposo|esposa|pareja|novio|novia|papa|mama|padre|madre|hermano|hermana|hijo|hija|amigo|amiga|vecino|vecina|jefe|jefa|primo|prima|tio|tia|abuelo|abuela|casero|casera|suegro|suegra)|otra persona|otro cliente|otros clientes|alguien mas|esa persona|ese senor|esa senora)\b/;
const ES_ACCOUNT_DATA =
  /\b(saldo|cuanto (dinero )?tiene|numero de (tarjeta|cuenta|celular|telefono)|nombre (completo|real)|telefono|direccion|domicilio|correo|curp|rfc|fecha de nacimiento|nip|cvv|movimientos)\b/;
/** A third person's account or card: "la cuenta de mi esposo", "su tarjeta". */
const ES_THIRD_PARTY_ACCOUNT =
  /\b((cuenta|tarjeta|app|aplicacion|movimientos|estado de cuenta|saldo|usuario) (pavo )?de (mi |su |un |una )?(ex|exesposo|exesposa|esposo|esposa|marido|mujer|pareja|novio|novia|papa|mama|padre|madre|hermano|hermana|hijo|hija|amigo|amiga|vecino|vecina|jefe|jefa|primo|prima|tio|tia|abuelo|abuela|suegro|suegra|empleado|empleada|cliente|el|ella)|su (cuenta|tarjeta|app|estado de cuenta))\b/;
/** Looking into it. */
const ES_LOOKUP =
  /\b(ver|revisar|consultar|checar|decir(me)?|dime|mostrar(me)?|muestrame|entrar|acceder|meterme|cuanto|que (compro|gasto|pago)|en que (gasta|gasto)|movimientos|estado de cuenta|a quien (le )?(manda|mando|transfiere|transfirio))\b/;

/** The es policy rules (src/nodes/policy.ts `POLICY_RULES`). */
export const ES_RULES: readonly PolicyRule[] = [
  ...structuralInjection("es"),
  {
    category: "prompt_injection",
    id: "es-ignore-instructions",
    all: [
      /\b(olvida|ignora|olvidate de|omite|borra|descarta)\b.{0,30}\b(instrucciones|reglas|indicaciones|politicas|restricciones|lo anterior|todo lo de arriba|lo que te dijeron)\b/,
    ],
  },
  {
    category: "prompt_injection",
    id: "es-previous-instructions",
    all: [/\binstrucciones (anteriores|previas|del sistema|ocultas|internas)\b/],
  },
  {
    category: "prompt_injection",
    id: "es-role-change",
    all: [
      /\b(ahora eres|a partir de ahora (eres|vas a ser|seras)|eres un (asesor|agente|administrador|empleado) (interno|sin restricciones)|sin restricciones|finge (ser|que eres)|actua como)\b/,
    ],
  },
  {
    category: "prompt_injection",
    id: "es-note-to-assistant",
    all: [/\b(nota|mensaje|instruccion(es)?) (para|al|a la) (el )?(asistente|bot|modelo|ia)\b/],
  },
  {
    category: "prompt_injection",
    id: "es-mode-switch",
    all: [
      /\bmodo (desarrollador|soporte tecnico|administrador|admin|dios|depuracion|sin restricciones)\b|\bactivado por (el )?administrador\b/,
    ],
  },
  {
    category: "prompt_injection",
    id: "es-role-play",
    all: [
      /\b(juguemos a|vamos a jugar|imagina que (eres|tu eres|fueras)|haz de cuenta que|hagamos de cuenta|interpreta (el papel|a un)|en tu papel de|hazte pasar por|eres mi (asesor|gerente|ejecutivo))\b/,
    ],
  },
  {
    category: "prompt_injection",
    id: "es-authority-claim",
    all: [
      /\b((soy|habla) (el |la |un |una )?(empleado|empleada|administrador|administradora|gerente|supervisor|supervisora|ingeniero|ingeniera|auditor|auditora) (de|del) (pavo|soporte|sistema|banco|area)|autorizad[oa] por (el |la )?(administrador|gerente|soporte|pavo|seguridad|direccion))\b/,
    ],
  },
  {
    category: "prompt_injection",
    id: "es-forced-reply",
    all: [
      /\b(responde|contesta|di|escribe) (solo|solamente|unicamente|nada mas) (con |la palabra )?["'“]|\bconfirmamelo por escrito\b|\bconfirma por escrito\b/,
    ],
  },
  { category: "other_customer_data", id: "es-third-party-data", all: [ES_THIRD_PARTY, ES_ACCOUNT_DATA] },
  { category: "other_customer_data", id: "es-third-party-account", all: [ES_THIRD_PARTY_ACCOUNT, ES_LOOKUP] },
  {
    category: "bypass_limits_or_verification",
    id: "es-without-check",
    all: [
      /\bsin (el |la |los |las |pasar por (el |la )?|hacer (el |la )?|mi )?(codigo|verificacion|verificar|revision|analisis|validacion|selfie|ine|identificacion)\b/,
    ],
  },
  {
    category: "bypass_limits_or_verification",
    id: "es-circumvent",
    all: [
      /\b(saltar(me|se)?|brincar(me|se)?|evitar|burlar|esquivar|rodear|evadir|darle la vuelta)\b.{0,30}\b(limite|limites|verificacion|codigo|revision|validacion|reporte|analisis)\b/,
    ],
  },
  {
    category: "bypass_limits_or_verification",
    id: "es-someone-elses-id",
    all: [
      /\b(ine|credencial|identificacion|pasaporte|documentos?|selfie|cara|rostro|curp) de (mi |su |un |una )?(hermano|hermana|amigo|amiga|mama|papa|madre|padre|esposo|esposa|primo|prima|hijo|hija|novio|novia|otra persona|alguien mas)\b/,
    ],
  },
  {
    category: "bypass_limits_or_verification",
    id: "es-someone-else-selfie",
    all: [
      /\bque (el|ella|otra persona|alguien mas) (grabe|tome|haga|se tome|saque|ponga) (la |su )?(selfie|cara|video)\b/,
    ],
  },
  {
    category: "bypass_limits_or_verification",
    id: "es-someone-elses-name",
    all: [/\ba nombre de (mi |su |otra persona|alguien)/],
  },
  {
    category: "bypass_limits_or_verification",
    id: "es-structuring",
    all: [/\b(no se (dan|den|van a dar) cuenta|para que no (lo |se )?(noten|detecten|reporten|den cuenta))\b/],
  },
  {
    category: "bypass_limits_or_verification",
    id: "es-act-on-your-end",
    all: [
      /\b(quitar(me)?|quitame|subir(me)?|subeme|levantar(me)?|desactivar|desactiva(me)?|aprobar(me)?|apruebame|autorizar(me)?|autorizame|desbloquear(me)?|desbloqueame|liberar(me)?|liberame|validar(me)?|validame|saltar(me)?)\b.{0,40}\b(desde (ahi|alla|tu lado|el chat|aqui)|por (el|este) chat|manualmente|a mano|tu mismo|tu misma|por debajo del agua|sin que nadie)\b/,
    ],
  },
  {
    category: "bypass_limits_or_verification",
    id: "es-exception",
    all: [
      /\b(hacer(me)?|hazme|haga(me)?) (una |un )?(excepcion|favorcito|paro)\b.{0,60}\b(limite|verificacion|revision|codigo|selfie|ine|validacion)|\b(limite|verificacion|revision|codigo|validacion)\b.{0,60}\b(excepcion|por esta vez|solo esta vez|nomas esta vez)\b.{0,40}\b(quita|quitar|salta|saltar|omite|omitir|brinca|brincar|desactiva|desactivar)/,
    ],
  },
  {
    category: "bypass_limits_or_verification",
    id: "es-split-to-avoid",
    all: [
      /\b(part|divid|repart|fraccion|separ)\w*\b.{0,60}\b(para (que )?no (llegar|pasar|rebasar|superar)|sin (llegar|pasar|rebasar|superar)|por debajo del|que no (se note|lo detecten|brinque))\b/,
    ],
  },
  {
    category: "out_of_scope",
    id: "es-creative-or-legal-writing",
    all: [
      /\b(redacta(me)?|escribe(me)?|hazme|componme|haz(me)?) (una |un |el |la )?(demanda|poema|cancion|cuento|ensayo|carta de amor|chiste|tarea|contrato|curriculum|cv|discurso|carta de presentacion)\b|\bpoemas?\b/,
    ],
  },
  {
    category: "out_of_scope",
    id: "es-legal",
    all: [/\b(demanda|juicio|abogad[oa]|codigo civil|codigo penal|articulos? del codigo|asesoria legal)\b/],
  },
  {
    category: "out_of_scope",
    id: "es-investment-advice",
    all: [/\b(invertir|inversiones|fondos? de inversion|acciones de|cetes|criptomonedas?|bitcoin|afore)\b/],
  },
  {
    category: "out_of_scope",
    id: "es-tax-advice",
    all: [
      /\b(declaracion anual|declarar (mis )?impuestos|asesoria fiscal|deducir|deducible|cuanto (de )?impuesto|isr que|pagar menos impuestos)\b/,
    ],
  },
  {
    category: "out_of_scope",
    id: "es-financial-advice",
    all: [
      /\b(me conviene (mas )?(invertir|comprar|sacar un credito|una hipoteca|pedir un prestamo|ahorrar en)|que (banco|tarjeta|credito|hipoteca|afore)( de credito| de debito)? me (conviene|recomiendas)|me recomiendas (un|una|algun|alguna) (banco|tarjeta|credito|inversion|hipoteca)|(mejor|peor) que (bbva|banorte|santander|nu|mercado pago|banamex|hsbc|otros bancos)|(el dolar|el tipo de cambio|el peso|las acciones) (va|van) a (subir|bajar))\b/,
    ],
  },
];
