/**
 * The answerer's policy rules in Brazilian Portuguese (pt-BR; src/nodes/policy.ts). Patterns are data, over normalised text.
 */
import { structuralInjection, type PolicyRule } from "./policy-shapes.js";

// Shared fragments (normalised text: lowercase, no accents).
const PT_THIRD_PARTY =
  /\b(dele|dela|deles|delas|(de|da|do) (outra pessoa|outro cliente|terceiros?)|(minha|meu) (ex|ex-mulher|ex-marido|ex-namorada|ex-namorado|mulher|marido|esposa|esposo|mae|pai|irma|irmao|filha|filho|namorada|namorado|amiga|amigo|vizinha|vizinho|chefe|prima|primo|tia|tio|avo|sobrinha|sobrinho|sogra|sogro)|uma? tal de|essa pessoa|esse cara|ela tem|ele tem)\b/;
const PT_ACCOUNT_DATA =
  /\b(saldo|quanto (dinheiro )?(ela|ele|eles|elas) (tem|tém)|cpf|rg|telefone|endereco|e-?mail|numero do cartao|nome completo|data de nascimento|extrato|senha)\b/;

/**
 * Injection shapes that do not depend on the language (see docs/holdout.md,
 * "What was changed"): fake role or system turns, chat-template tokens,
 * JSON/YAML keys that carry instructions, markdown "system" headings and
 * encoded payloads. Every locale's rules start with these.
 */
const PT_THIRD_PARTY_ACCOUNT =
  /\b((conta|cartao|app|aplicativo|extrato|saldo|fatura|pix) (da pavo )?(dele|dela|deles|delas|(do|da) (meu |minha )?(ex|ex-mulher|ex-marido|marido|mulher|esposa|esposo|namorad[oa]|mae|pai|irma|irmao|filha|filho|amig[oa]|vizinh[oa]|chefe|prim[oa]|tia|tio|avo|sogr[oa]|funcionari[oa]|cliente)))\b/;
/** Looking into it. */
const PT_LOOKUP =
  /\b(ver|olhar|consultar|checar|conferir|me (diz|diga|fala|fale|mostra|mostre|passa|passe)|mostrar|entrar|acessar|quanto|o que (ele|ela) (comprou|gastou|pagou)|com o que (ele|ela) gast|extrato|movimentacao|movimentacoes|pra quem (ele|ela) (mandou|manda|transferiu))\b/;

/** The policy rules, per locale. */

/** The pt policy rules (src/nodes/policy.ts `POLICY_RULES`). */
export const PT_RULES: readonly PolicyRule[] = [
  ...structuralInjection("pt"),
  {
    category: "prompt_injection",
    id: "pt-ignore-instructions",
    all: [
      /\b(ignore|ignora|esqueca|esquece|desconsidere|desconsidera|descarte)\b.{0,30}\b(instrucoes|regras|orientacoes|politicas|restricoes|tudo acima|tudo o que (te )?disseram|o que foi dito)\b/,
    ],
  },
  {
    category: "prompt_injection",
    id: "pt-previous-instructions",
    all: [/\binstrucoes (anteriores|previas|do sistema|ocultas|internas)\b/],
  },
  {
    category: "prompt_injection",
    id: "pt-role-change",
    all: [/\b(a partir de agora voce (e|sera|vai ser)|agora voce e|finja (ser|que e)|aja como|sem restricoes)\b/],
  },
  { category: "prompt_injection", id: "pt-answer-only", all: [/\bresponda (so|apenas|somente) ["'“]?\w+["'”]?/] },
  {
    category: "prompt_injection",
    id: "pt-note-to-assistant",
    all: [/\b(nota|mensagem|instrucao|instrucoes) (para|ao|a) (o )?(assistente|bot|modelo|ia)\b/],
  },
  {
    category: "prompt_injection",
    id: "pt-mode-switch",
    all: [/\bmodo (desenvolvedor|administrador|admin|suporte tecnico|deus|depuracao)\b/],
  },
  {
    category: "prompt_injection",
    id: "pt-role-play",
    all: [
      /\b(vamos (brincar|jogar|fingir)|imagin[ae] que voce (e|fosse|seja)|faz de conta|finge que (e|voce e)|interprete (o papel|um)|no papel de|se passe por|voce agora e)\b/,
    ],
  },
  {
    category: "prompt_injection",
    id: "pt-authority-claim",
    all: [
      /\b((sou|aqui e|quem fala e) (o |a |um |uma )?(funcionari[oa]|administrador[a]?|gerente|supervisor[a]?|engenheir[oa]|auditor[a]?) (da|do) (pavo|suporte|sistema|banco)|autorizad[oa] pel[oa] (administrador|gerente|suporte|pavo|seguranca|diretoria))\b/,
    ],
  },
  {
    category: "prompt_injection",
    id: "pt-forced-reply",
    all: [
      /\b(responda|responde|diga|escreva) (so|apenas|somente) (com |a palavra )?["'“]|\bconfirme por escrito\b|\bconfirma por escrito\b/,
    ],
  },
  { category: "other_customer_data", id: "pt-third-party-data", all: [PT_THIRD_PARTY, PT_ACCOUNT_DATA] },
  { category: "other_customer_data", id: "pt-third-party-account", all: [PT_THIRD_PARTY_ACCOUNT, PT_LOOKUP] },
  {
    category: "bypass_limits_or_verification",
    id: "pt-without-check",
    all: [
      /\bsem (passar (por|pela|pelo) )?(a |o |aquela |aquele |essa |esse |nenhuma |nenhum )?(analise|verificacao|codigo|validacao|selfie|biometria|confirmacao)\b/,
    ],
  },
  {
    category: "bypass_limits_or_verification",
    id: "pt-circumvent",
    all: [
      /\b(burlar|driblar|pular|contornar|furar|escapar d[ao]s?)\b.{0,30}\b(limite|limites|analise|verificacao|codigo|validacao|biometria)\b/,
    ],
  },
  {
    category: "bypass_limits_or_verification",
    id: "pt-someone-elses-id",
    all: [
      /\b(documento|rg|cnh|cpf|selfie|rosto|foto) (de|da|do) (outra pessoa|minha mae|meu pai|meu irmao|minha irma|meu amigo|minha amiga|terceiros?)\b/,
    ],
  },
  {
    category: "bypass_limits_or_verification",
    id: "pt-someone-elses-name",
    all: [/\b(no|em) nome (dela|dele|de outra pessoa|da minha|do meu|de terceiros?)\b/],
  },
  {
    category: "bypass_limits_or_verification",
    id: "pt-release-by-chat",
    all: [/\b(libera|liberar|libere|aprova|aprovar|aumenta|aumentar)\b.{0,20}\b(pelo chat|por fora|na mao)\b/],
  },
  {
    category: "bypass_limits_or_verification",
    id: "pt-structuring",
    all: [/\bpra (eles|ninguem|o banco) nao (perceber|notar|ver|desconfiar)\b|\bsem (eles|ninguem) (perceber|notar)\b/],
  },
  {
    category: "bypass_limits_or_verification",
    id: "pt-act-on-your-end",
    all: [
      /\b(tirar|tira|remover|remove|desativar|desativa|aprovar|aprova|autorizar|autoriza|desbloquear|desbloqueia|validar|valida|subir|sobe|aumentar|aumenta|liberar|libera)\b.{0,40}\b(dai|do seu lado|por ai|manualmente|na mao|voce mesm[oa]|por baixo dos panos|sem ninguem saber)\b/,
    ],
  },
  {
    category: "bypass_limits_or_verification",
    id: "pt-exception",
    all: [
      /\b(abrir|abre|fazer|faz|faca) (uma )?excecao\b|\bexcecao\b.{0,60}\b(limite|analise|verificacao|codigo|selfie|biometria)|\b(limite|analise|verificacao|codigo|selfie|biometria)\b.{0,60}\bexcecao\b/,
    ],
  },
  {
    category: "bypass_limits_or_verification",
    id: "pt-split-to-avoid",
    all: [
      /\b(dividir|divido|quebrar|quebro|fracionar|fraciono|picar|pico|separar)\b.{0,60}\b(pra nao (passar|estourar|bater|chegar)|sem (passar|estourar|bater) (o|no) limite|abaixo do limite|pra nao (chamar atencao|cair na analise))\b/,
    ],
  },
  {
    category: "out_of_scope",
    id: "pt-creative-writing",
    all: [
      /\b(escreve|escreva|faz|faca|cria|crie|compoe|componha|redige|redija) (pra mim )?(um |uma )?(poema|poesia|musica|cancao|historia|redacao|piada|carta de amor|curriculo|discurso|trabalho da faculdade)\b|\b(poema|poesia)s?\b/,
    ],
  },
  {
    category: "out_of_scope",
    id: "pt-legal",
    all: [/\b(processo judicial|processar (a|o|ele|ela)|advogad[oa]|acao judicial|juizado|codigo civil)\b/],
  },
  {
    category: "out_of_scope",
    id: "pt-investment-advice",
    all: [
      /\b(investir|investimentos?|bolsa de valores|bitcoin|criptomoedas?|tesouro direto|fundos? de investimento)\b/,
    ],
  },
  {
    category: "out_of_scope",
    id: "pt-tax-advice",
    all: [
      /\b(como (eu )?declar[oa]|declarar (no|o) imposto|declaracao do (ir|imposto)|irpf|deduzir|dedutivel|pagar menos imposto)\b/,
    ],
  },
  {
    category: "out_of_scope",
    id: "pt-financial-advice",
    all: [
      /\b(vale a pena (investir|financiar|pegar (um )?emprestimo|fazer (um )?consorcio|comprar)|qual (banco|cartao|investimento|financiamento) (e melhor|voce (me )?recomenda|vale mais)|me recomenda (um|uma|algum|alguma) (banco|cartao|investimento|financiamento)|(melhor|pior) que (o )?(nubank|itau|bradesco|inter|c6|santander|banco do brasil|caixa|picpay|mercado pago|outros bancos)|consorcio|(o dolar|a cotacao|as acoes) (vai|vao) (subir|cair))\b/,
    ],
  },
];
